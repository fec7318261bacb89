import Foundation
import Testing
import VendFleetStore
import VenddTestSupport

@testable import VendOffice

/// A `cash-collected` event as the ingester stores it: coins 100 × 10, 500 × 4 and a bill of
/// 1000 × 2 (total 5000), or `denominations` given.
func collectionEvent(
    _ machine: String, _ seq: Int64, number: Int64, at: Int64, total: String = "5000",
    denominations: [DenominationCount] = [
        DenominationCount(kind: .coin, value: "100", count: 10), DenominationCount(kind: .coin, value: "500", count: 4),
        DenominationCount(kind: .bill, value: "1000", count: 2),
    ]
) -> IncomingEvent {
    IncomingEvent(
        machine: machine, seq: seq, id: "\(machine)-\(seq)", type: "cash-collected", at: at, payload: "{}",
        collection: CollectionColumns(
            number: number, currency: "KRW", total: total, since: nil, collectedBy: "tech <b>", denominations: denominations))
}

@Suite("Back office: cash collections and charts", .serialized, .timeLimit(.minutes(3)))
struct OfficeCashTests {
    /// The driver counts the bag: the page shows, per denomination and in total, the machine's
    /// count against the driver's and the difference; the operator's correction replaces it,
    /// and the audit log keeps both.
    @Test(arguments: Engine.allCases)
    func aDriversCountShowsTheDifferenceAndACorrectionReplacesIt(_ engine: Engine) throws {
        let rig = try OfficeRig(engine)
        defer { rig.stop() }
        _ = try rig.store.commit(
            events: [collectionEvent("m1", 3, number: 1, at: rig.noon - 7_200_000), collectionEvent("m1", 9, number: 2, at: rig.noon - 3_600_000)],
            retained: [], receivedAt: rig.noon)
        var dan = try rig.loggedIn("dan")
        let list = try dan.get("/cash?id=m1")
        #expect(list.status == 200)
        #expect(list.body.contains("<svg") && list.body.contains("#1 · machine counted: 5,000원"))
        #expect(list.body.contains("<td>tech &lt;b&gt;</td>") && list.body.contains("enter the count"))
        let page = try dan.get("/collection?id=m1&seq=9")
        #expect(page.status == 200 && page.body.contains("Collection 2 of m1"))
        let csrf = try #require(page.csrf)
        let saved = try dan.post(
            "/collection", [("csrf", csrf), ("id", "m1"), ("seq", "9"), ("coin:100", "9"), ("coin:500", "4"), ("bill:1000", "2")])
        #expect(saved.status == 303, "\(saved.body)")
        let counted = try dan.get("/collection?id=m1&seq=9").body
        #expect(counted.contains("Counted by dan"))
        #expect(counted.contains(#"<td class="n alert">-1</td><td class="n alert">-100원</td>"#), "coin 100: one missing")
        #expect(counted.contains(#"<th class="n">5,000원</th><th class="n">4,900원</th><th></th><th class="n alert">-100원</th>"#))
        #expect(try dan.get("/cash?id=m1").body.contains(#"<td class="n alert">-100원</td><td>dan, "#))

        var ann = try rig.loggedIn("ann")
        let annCSRF = try #require(try ann.get("/collection?id=m1&seq=9").csrf)
        #expect(
            try ann.post("/collection", [("csrf", annCSRF), ("id", "m1"), ("seq", "9"), ("coin:100", "10"), ("coin:500", "4"), ("bill:1000", "2")])
                .status == 303)
        let record = try #require(try rig.store.collections(of: "m1").last)
        #expect(record.counted?.enteredBy == "ann" && record.countedTotal == "5000" && record.difference == "0")
        #expect(try rig.store.collections(of: "m1").first?.counted == nil, "the other collection is untouched")
        let audit = try ann.get("/audit").body
        #expect(audit.contains("m1 collection 2 (event 9): coin 100 × 9, coin 500 × 4, bill 1000 × 2; counted 4900, machine 5000, difference -100"))
        #expect(audit.contains("coin 100 × 10, coin 500 × 4, bill 1000 × 2; counted 5000, machine 5000, difference 0; replaces dan&#39;s of"))
    }

    /// Bad counts get a sentence and store nothing; forged posts are refused; SQL and HTML in a
    /// machine's id and values are data.
    @Test(arguments: Engine.allCases)
    func hostileEntriesAreRefusedAndStoreNothing(_ engine: Engine) throws {
        let rig = try OfficeRig(engine)
        defer { rig.stop() }
        let hostile = "m'; DROP TABLE collections; --<script>"
        _ = try rig.store.commit(
            events: [
                collectionEvent("m1", 3, number: 1, at: rig.noon), collectionEvent(hostile, 1, number: 1, at: rig.noon),
                collectionEvent(
                    "big", 1, number: 1, at: rig.noon, total: "1",
                    denominations: [
                        DenominationCount(kind: .bill, value: "10000000000000", count: 0), DenominationCount(kind: .coin, value: "1", count: 1),
                    ]),
            ], retained: [], receivedAt: rig.noon)
        var dan = try rig.loggedIn("dan")
        let csrf = try #require(try dan.get("/collection?id=m1&seq=3").csrf)
        func post(_ fields: [(String, String)], machine: String = "m1", seq: String = "3", csrf token: String? = nil) throws
            -> OfficeHTTPClient.Answer
        {
            try dan.post("/collection", (token.map { [("csrf", $0)] } ?? [("csrf", csrf)]) + [("id", machine), ("seq", seq)] + fields)
        }
        let cases: [([(String, String)], String)] = [
            (
                [("coin:100", "1; DROP TABLE collection_counts")],
                "coin 100: &#39;1; DROP TABLE collection_counts&#39; is not a whole number of coins (0 or more)"
            ),
            ([("coin:100", "-1")], "coin 100: &#39;-1&#39; is not a whole number of coins"),
            ([("coin:100", "1.5")], "coin 100: &#39;1.5&#39; is not a whole number of coins"),
            ([("coin:100", "99999999999999999999999")], "is not a whole number of coins"),
            ([("bill:1000", "1000001")], "bill 1000: 1000001 is more than 1000000 bills"),
            ([("coin:50", "3"), ("coin:100", "1")], "coin 50 is not a denomination this machine counts (coin 100, coin 500, bill 1000)"),
            ([("coin:100<b>", "3")], "coin 100&lt;b&gt; is not a denomination"),
            ([], "enter the counted number of each coin and bill (0 for none)"),
        ]
        for (fields, message) in cases {
            let answer = try post(fields)
            #expect(answer.status == 400, "\(fields)")
            #expect(answer.body.contains(message), "\(fields): \(answer.body)")
        }
        // The refused entry is shown again, escaped, for the driver to correct.
        #expect(try post([("coin:100", "\"><script>")]).body.contains(#"value="&quot;&gt;&lt;script&gt;""#))
        // A denomination too large to total is refused, not an overflow.
        let big = try post([("bill:10000000000000", "1000000"), ("coin:1", "1")], machine: "big", seq: "1")
        #expect(big.status == 400 && big.body.contains("the total of these counts is too large to be a cash box&#39;s"))
        #expect(try post([("coin:100", "1")], seq: "4").status == 404)
        #expect(try post([("coin:100", "1")], machine: "m2").status == 404)
        // Without the session's token: refused before anything is read.
        #expect(try dan.post("/collection", [("id", "m1"), ("seq", "3"), ("coin:100", "1")]).status == 403)
        #expect(try post([("coin:100", "1")], csrf: "forged").status == 403)
        for machine in ["m1", "big"] { #expect(try rig.store.collections(of: machine).allSatisfy { $0.counted == nil }) }

        // The hostile machine's id is data: stored, shown escaped, and its count taken.
        let hostilePage = try dan.get("/cash?id=\(OfficeHTTPClient.encode(hostile))")
        #expect(hostilePage.body.contains("m&#39;; DROP TABLE collections; --&lt;script&gt;") && !hostilePage.body.contains("<script>"))
        #expect(try post([("coin:100", "10"), ("coin:500", "4"), ("bill:1000", "2")], machine: hostile, seq: "1").status == 303)
        #expect(try rig.store.collections(of: hostile).first?.difference == "0")
        #expect(try rig.store.collections(of: "m1").count == 1)
    }

    /// The machine page draws sales per day and per product, and each zone's temperatures from
    /// the store's bounded history: one reading per zone and minute, none older than a week.
    @Test(arguments: Engine.allCases)
    func theMachinePageChartsSalesAndTemperatures(_ engine: Engine) throws {
        let rig = try OfficeRig(engine)
        defer { rig.stop() }
        let hour: Int64 = 3_600_000
        var events: [IncomingEvent] = []
        for (index, (product, day)) in [("cola", 0), ("cola", 0), ("<b>tea</b>", 2), ("cola", 20)].enumerated() {
            let at = rig.noon - Int64(day) * 24 * hour
            let seq = Int64(index * 2 + 1)
            events.append(officeEvent("m1", seq, "vend-started", at: at, #","vend":\#(index),"product":"\#(product)","amount":"1200""#))
            events.append(officeEvent("m1", seq + 1, "vend-ended", at: at + 1, #","vend":\#(index),"outcome":"sold","payment":"cash""#))
        }
        func zone(_ temperature: String, at: Int64) -> RetainedUpdate {
            RetainedUpdate(
                machine: "m1", subject: "zones/cold", payload: "{}",
                columns: .zone(
                    ZonePosition(
                        zone: "cold", kind: "cold", health: "ok", temperature: temperature, sensorFault: nil, setPoint: "4", relayOn: true,
                        maxReached: nil, since: nil, cause: nil, at: at)))
        }
        _ = try rig.store.commit(events: events, retained: [zone("9.0", at: rig.noon - 9 * 24 * hour)], receivedAt: rig.noon - 9 * 24 * hour)
        for (minutes, temperature) in [(0, "3.5"), (1, "4.5"), (1, "7.25"), (2, "5.0")] {
            let at = rig.noon - 2 * hour + Int64(minutes) * 60_000
            _ = try rig.store.commit(events: [], retained: [zone(temperature, at: at + 5)], receivedAt: at + 5)
        }
        let readings = try rig.openSQL().rows("SELECT temperature FROM zone_readings WHERE machine = 'm1' ORDER BY minute", [])
        #expect(readings.map { $0[0] } == ["3.5", "7.25", "5.0"], "one a minute, the minute's last; the week-old one pruned")

        var ann = try rig.loggedIn("ann")
        let page = try ann.get("/machine?id=m1").body
        #expect(page.contains("Sales per day, last 14 days") && page.contains("· cash: 2,400원</title>"))
        #expect(page.contains("&lt;b&gt;tea&lt;/b&gt;") && !page.contains("<b>tea"))
        #expect(page.contains("2 sold, 2,400원"), "the 20-day-old sale is outside the 14 days")
        #expect(page.contains("Zone cold (cold), last 7 days") && page.contains("<polyline class='reading'"))
        #expect(page.contains("<title>set point 4</title>"))
        var dan = try rig.loggedIn("dan")
        let driver = try dan.get("/machine?id=m1").body
        #expect(driver.contains("(items sold)") && driver.contains("· cash: 2</title>") && !driver.contains("1,200원") && !driver.contains("2,400원"))
    }
}
