import Foundation
import Logging
import Synchronization
import Testing
import VendConfig
import VendFleetIngest
import VendFleetStore
import VenddTestSupport
import VendingCore

@testable import VendOffice

/// The time the office sees: set by the test.
final class OfficeTestClock: Sendable {
    let now: Mutex<Int64>
    init(_ now: Int64) { self.now = Mutex(now) }
    func advance(_ milliseconds: Int64) { now.withLock { $0 += milliseconds } }
    var value: Int64 { now.withLock { $0 } }
}

/// A real office (libmicrohttpd on a reserved loopback port) on a real database of `engine`,
/// with an operator `ann` and a route driver `dan`; `store` commits the fleet's data the way
/// the ingester does.
struct OfficeRig {
    static let operatorPassword = "ann's long password"
    static let driverPassword = "dan's long password"

    let directory: TemporaryDirectory
    let store: FleetStore
    let service: OfficeService
    let clock: OfficeTestClock
    /// Noon today, local time: the office's "now".
    let noon: Int64
    /// A connection of the test's own to the office's database.
    let openSQL: () throws -> FleetSQL

    var port: Int { service.port }

    /// `cluster`: a PostgreSQL of the test's own (one it stops), instead of the run's shared one.
    /// `commands`: how the office reaches machines (none: it sends no prices).
    init(
        _ engine: Engine, throttle: (perUser: Int, perAddress: Int)? = nil, cluster: PostgresCluster? = nil, commands: MachineCommands? = nil,
        commandTimeout: Duration = .seconds(5)
    ) throws {
        directory = try TemporaryDirectory()
        let open: () throws -> FleetSQL
        switch engine {
        case .sqlite:
            let path = directory.path + "/fleet.db"
            store = try SQLiteFleetStore(path: path, now: 1)
            open = { try openFleetSQL(sqlitePath: path, now: 1) }
        case .postgresql:
            let conninfo = try (cluster ?? PostgresCluster.running()).createDatabase()
            store = try PostgresFleetStore(conninfo: conninfo, now: 1)
            open = { try openFleetSQL(conninfo: conninfo, now: 1) }
        }
        openSQL = open
        noon = Office.localMidnight(Int64(Date().timeIntervalSince1970 * 1000), daysBack: 0) + 12 * 3_600_000
        let clock = OfficeTestClock(noon)
        self.clock = clock
        let records = OfficeRecords(try open())
        try Sodium.start()
        try records.addUser("ann", role: .operator_, password: Self.operatorPassword, now: 1)
        try records.addUser("dan", role: .driver, password: Self.driverPassword, now: 1)
        let settings = OfficeSettings(
            port: try LocalPort.reserve(), currencies: ["KRW": MoneyFormat(template: "{amount}원", groupingSeparator: ",", decimalSeparator: ".")!])
        service = try OfficeService(
            settings: settings, logger: Logger(label: "office-test") { _ in SwiftLogNoOpLogHandler() }, throttleLimits: throttle,
            commands: commands, commandTimeout: commandTimeout, clock: { clock.value }, open: open)
    }

    func stop() {
        service.stop()
        directory.remove()
    }

    func client() -> OfficeHTTPClient { OfficeHTTPClient(port: port) }

    /// A client logged in as `ann` or `dan`.
    func loggedIn(_ user: String) throws -> OfficeHTTPClient {
        var client = client()
        let answer = try client.logIn(user, user == "ann" ? Self.operatorPassword : Self.driverPassword)
        guard answer.status == 303, client.jar[Office.sessionCookie] != nil else {
            throw OfficeTestError("login of \(user): \(answer.status) \(answer.body)")
        }
        return client
    }
}

func officeEvent(_ machine: String, _ seq: Int64, _ type: String, at: Int64, _ fields: String) -> IncomingEvent {
    IncomingEvent(
        machine: machine, seq: seq, id: "\(machine)-\(seq)", type: type, at: at,
        payload: #"{"id":"\#(machine)-\#(seq)","seq":\#(seq),"machine":"m","at":\#(at),"type":"\#(type)","currency":"KRW"\#(fields)}"#)
}

func stockUpdate(_ machine: String, _ slots: [SlotPosition]) -> RetainedUpdate {
    RetainedUpdate(machine: machine, subject: "stock", payload: "{}", columns: .stock(currency: "KRW", slots: slots))
}

@Suite("Back office over HTTP", .serialized, .timeLimit(.minutes(3)))
struct OfficeTests {
    @Test func eachRoleLogsInAndTheDriverIsRefusedTheOperatorsPages() throws {
        let rig = try OfficeRig(.sqlite)
        defer { rig.stop() }
        var ann = try rig.loggedIn("ann")
        var dan = try rig.loggedIn("dan")
        let cookie = try #require(ann.jar[Office.sessionCookie])
        var again = rig.client()
        let login = try again.logIn("ann", OfficeRig.operatorPassword)
        let set = try #require(login.cookies.first { $0.hasPrefix(Office.sessionCookie + "=") })
        #expect(set.contains("HttpOnly") && set.contains("SameSite=Strict") && set.contains("Max-Age=43200") && !set.contains("Secure"))
        #expect(cookie.count == 64)

        #expect(try ann.get("/fleet").body.contains("ann (operator)"))
        #expect(try dan.get("/fleet").body.contains("dan (driver)"))
        #expect(try ann.get("/audit").status == 200)
        #expect(try dan.get("/audit").status == 403)
        let routes = try dan.get("/routes")
        #expect(routes.status == 200 && !routes.body.contains("New route"))
        let csrf = try #require(routes.csrf)
        #expect(try dan.post("/routes", [("csrf", csrf), ("name", "north"), ("machines", "m1")]).status == 403)
        #expect(try dan.post("/par", [("csrf", csrf), ("machine", "m1"), ("slot", "A1"), ("par", "3")]).status == 403)
        #expect(try dan.post("/routes/delete", [("csrf", csrf), ("name", "north")]).status == 403)
        let annCSRF = try #require(try ann.get("/routes").csrf)
        #expect(try ann.post("/routes", [("csrf", annCSRF), ("name", "north"), ("machines", "m1, m2")]).status == 303)
        #expect(try dan.get("/routes").body.contains("m1, m2"))
        #expect(try ann.get("/audit").body.contains("north: m1, m2"))

        // Logging out ends the session on the server, not only in the browser.
        let stale = ann.jar
        #expect(try ann.post("/logout", [("csrf", annCSRF)]).status == 303)
        var replay = rig.client()
        replay.jar = stale
        #expect(try replay.get("/fleet").header("Location") == "/login")
    }

    @Test func aWrongPasswordOrUnknownUserGetsNoSession() throws {
        let rig = try OfficeRig(.sqlite)
        defer { rig.stop() }
        for (user, password) in [("ann", "not the password"), ("nobody", OfficeRig.operatorPassword), ("ann", ""), ("", "")] {
            var client = rig.client()
            let answer = try client.logIn(user, password)
            #expect(answer.status == 403, "\(user)")
            #expect(answer.body.contains("Wrong user name or password."))
            #expect(client.jar[Office.sessionCookie] == nil)
            #expect(try client.get("/fleet").header("Location") == "/login")
        }
    }

    @Test func failedLoginsAreLimitedPerUserAndPerAddress() throws {
        let rig = try OfficeRig(.sqlite, throttle: (perUser: 3, perAddress: 6))
        defer { rig.stop() }
        var client = rig.client()
        for _ in 0..<3 { #expect(try client.logIn("ann", "guess").status == 403) }
        // The limit holds even for the right password, which is not checked.
        let refused = try client.logIn("ann", OfficeRig.operatorPassword)
        #expect(refused.status == 429 && client.jar[Office.sessionCookie] == nil)
        // Another user from the same address: its own count, until the address's is reached.
        #expect(try client.logIn("dan", "guess").status == 403)
        #expect(try client.logIn("eve", "guess").status == 403)
        #expect(try client.logIn("fay", "guess").status == 403)
        #expect(try client.logIn("dan", OfficeRig.driverPassword).status == 429)
        // The window passes.
        rig.clock.advance(15 * 60 * 1000)
        #expect(try client.logIn("ann", OfficeRig.operatorPassword).status == 303)
    }

    @Test func forgedAndExpiredSessionsAreRefused() throws {
        let rig = try OfficeRig(.sqlite)
        defer { rig.stop() }
        var forged = rig.client()
        forged.jar[Office.sessionCookie] = String(repeating: "ab", count: 32)
        #expect(try forged.get("/fleet").header("Location") == "/login")
        #expect(try forged.post("/routes", [("csrf", "x"), ("name", "north"), ("machines", "m1")]).status == 403)
        forged.jar[Office.sessionCookie] = "' OR '1'='1"
        #expect(try forged.get("/fleet").header("Location") == "/login")

        var ann = try rig.loggedIn("ann")
        #expect(try ann.get("/fleet").status == 200)
        rig.clock.advance(12 * 3_600_000 - 1)
        #expect(try ann.get("/fleet").status == 200)
        rig.clock.advance(1)
        #expect(try ann.get("/fleet").header("Location") == "/login")
    }

    @Test func aPostWithoutTheRightCSRFTokenChangesNothing() throws {
        let rig = try OfficeRig(.sqlite)
        defer { rig.stop() }
        var ann = try rig.loggedIn("ann")
        let csrf = try #require(try ann.get("/routes").csrf)
        #expect(try ann.post("/routes", [("name", "north"), ("machines", "m1")]).status == 403)
        #expect(try ann.post("/routes", [("csrf", ""), ("name", "north"), ("machines", "m1")]).status == 403)
        #expect(try ann.post("/routes", [("csrf", String(csrf.reversed())), ("name", "north"), ("machines", "m1")]).status == 403)
        // Another session's token is not this one's.
        var second = try rig.loggedIn("ann")
        let other = try #require(try second.get("/routes").csrf)
        #expect(try ann.post("/routes", [("csrf", other), ("name", "north"), ("machines", "m1")]).status == 403)
        #expect(try ann.post("/logout", []).status == 403)
        #expect(try !ann.get("/routes").body.contains("north"))
        #expect(try ann.post("/routes", [("csrf", csrf), ("name", "north"), ("machines", "m1")]).status == 303)
        #expect(try ann.get("/routes").body.contains("north"))

        // The login form's token is checked against its cookie.
        var stranger = rig.client()
        let page = try stranger.get("/login")
        stranger.jar = [:]
        #expect(try stranger.post("/login", [("csrf", page.csrf ?? ""), ("user", "ann"), ("password", OfficeRig.operatorPassword)]).status == 403)
        #expect(stranger.jar[Office.sessionCookie] == nil)
    }

    @Test func aDatabaseThatIsAwayIsA503AndTheOfficeReconnects() throws {
        let cluster = try PostgresCluster()
        defer {
            cluster.stop()
            cluster.remove()
        }
        let rig = try OfficeRig(.postgresql, cluster: cluster)
        defer { rig.stop() }
        var dan = try rig.loggedIn("dan")
        cluster.crash()
        let away = try dan.get("/fleet")
        #expect(away.status == 503 && away.body.contains("The database did not answer") && !away.body.contains("SELECT"))
        try cluster.start()
        #expect(try dan.get("/fleet").status == 200)
    }

    @Test(arguments: Engine.allCases)
    func metacharactersInEveryFieldAreDataNotCode(_ engine: Engine) throws {
        let rig = try OfficeRig(engine)
        defer { rig.stop() }
        let hostile = #"x'); DROP TABLE office_users;--<script>alert("m")</script>&amp;"#
        let product = #"=HYPERLINK("http://evil") <b>"#
        _ = try rig.store.commit(
            events: [],
            retained: [
                stockUpdate(
                    hostile, [SlotPosition(slot: "A1'<i>", product: product, price: "1200", available: 1, stock: 1, capacity: 4, earliestExpiry: nil)]
                ),
                RetainedUpdate(
                    machine: hostile, subject: "state",
                    payload: #"{"machine":"x","online":true,"state":"out-of-order","reason":"<img src=x onerror=alert(1)>"}"#),
            ], receivedAt: rig.noon)
        var ann = try rig.loggedIn("ann")
        let csrf = try #require(try ann.get("/routes").csrf)
        // A route name outside the allowed characters is refused, its text shown escaped.
        let refused = try ann.post("/routes", [("csrf", csrf), ("name", "r' OR '1'='1 <b>"), ("machines", "m1")])
        #expect(refused.status == 400 && refused.body.contains("r&#39; OR &#39;1&#39;=&#39;1 &lt;b&gt;") && !refused.body.contains("<b>"))
        #expect(try ann.post("/routes", [("csrf", csrf), ("name", "north"), ("machines", hostile)]).status == 303)
        #expect(try ann.post("/par", [("csrf", csrf), ("route", "north"), ("machine", hostile), ("slot", "A1'<i>"), ("par", "3")]).status == 303)
        #expect(
            try ann.post("/par", [("csrf", csrf), ("route", "north"), ("machine", hostile), ("slot", "A1"), ("par", "3; DROP TABLE x")]).status == 400
        )
        var dan = try rig.loggedIn(#"dan"#)
        for page in [
            try ann.get("/fleet?q=" + OfficeHTTPClient.encode(#""><script>alert(1)</script>"#)), try ann.get("/fleet"), try ann.get("/routes"),
            try ann.get("/pick-list?route=north"), try ann.get("/audit"), try dan.get("/fleet"),
            try ann.get("/machine?id=" + OfficeHTTPClient.encode(hostile)),
        ] {
            #expect(page.status == 200)
            // No script but the office's own file.
            let body = page.body.replacingOccurrences(of: #"<script src="/office.js" defer></script>"#, with: "")
            #expect(!body.contains("<script") && !body.contains("<img") && !body.contains("<i>") && !body.contains("<b>"))
        }
        let fleet = try ann.get("/fleet")
        #expect(fleet.body.contains("x&#39;); DROP TABLE office_users;--&lt;script&gt;alert(&quot;m&quot;)&lt;/script&gt;&amp;amp;"))
        #expect(fleet.body.contains("out-of-order: &lt;img src=x onerror=alert(1)&gt;"))
        let pick = try ann.get("/pick-list?route=north")
        #expect(pick.body.contains("A1&#39;&lt;i&gt;") && pick.body.contains("name=\"par\" size=\"3\" inputmode=\"numeric\" value=\"3\""))
        // The par level reached the slot, and the CSV defuses the formula.
        let csv = try ann.get("/pick-list.csv?route=north")
        #expect(csv.header("Content-Type") == "text/csv; charset=utf-8")
        #expect(csv.body.contains(#""'=HYPERLINK(""http://evil"") <b>",1,4,3,0,2,"#))
        // A user name of SQL is a wrong name, and every table is still there.
        var sql = rig.client()
        #expect(try sql.logIn("' OR '1'='1' --", "' OR '1'='1' --").status == 403)
        #expect(try dan.get("/fleet").status == 200)
        #expect(try rig.loggedIn("ann").jar[Office.sessionCookie] != nil)
        #expect(try rig.store.slots(of: hostile).count == 1)
    }

    @Test(arguments: Engine.allCases)
    func thePickListLoadsEachSlotToItsParOrCapacity(_ engine: Engine) throws {
        let rig = try OfficeRig(engine)
        defer { rig.stop() }
        let past = rig.noon - 3_600_000
        // Within two days the slot is named to check; beyond, it is not.
        let soon = rig.noon + 2 * 86_400_000
        let later = soon + 60_000
        _ = try rig.store.commit(
            events: [],
            retained: [
                stockUpdate(
                    "m1",
                    [
                        SlotPosition(slot: "A1", product: "cola", price: "1200", available: 0, stock: 0, capacity: 8, earliestExpiry: nil),
                        SlotPosition(slot: "A2", product: "water", price: "900", available: 3, stock: 5, capacity: 10, earliestExpiry: past),
                        SlotPosition(slot: "B1", product: "cola", price: "1200", available: 6, stock: 6, capacity: 6, earliestExpiry: soon),
                    ]),
                stockUpdate(
                    "m2", [SlotPosition(slot: "A1", product: "cola", price: "1200", available: 2, stock: 2, capacity: 8, earliestExpiry: later)]),
                stockUpdate(
                    "m3", [SlotPosition(slot: "A1", product: "tea", price: "1000", available: 0, stock: 0, capacity: 5, earliestExpiry: nil)]),
            ], receivedAt: rig.noon)
        var ann = try rig.loggedIn("ann")
        let csrf = try #require(try ann.get("/routes").csrf)
        #expect(try ann.post("/routes", [("csrf", csrf), ("name", "north 1"), ("machines", "m2\nm1\nm9")]).status == 303)
        #expect(try ann.post("/par", [("csrf", csrf), ("route", "north 1"), ("machine", "m2"), ("slot", "A1"), ("par", "5")]).status == 303)
        var dan = try rig.loggedIn("dan")
        let csv = try dan.get("/pick-list.csv?route=north%201")
        #expect(csv.status == 200)
        #expect(
            csv.body
                == [
                    "machine,slot,product,stock,capacity,par,expired,load,expires_soon",
                    "m2,A1,cola,2,8,5,0,3,",
                    "m1,A1,cola,0,8,,0,8,",
                    "m1,A2,water,5,10,,2,7,",
                    "m1,B1,cola,6,6,,0,0,\(Pages.localTime(soon))",
                    "TOTAL,,cola,,,,0,11,",
                    "TOTAL,,water,,,,2,7,",
                ].map { $0 + "\r\n" }.joined())
        let page = try dan.get("/pick-list?route=north%201")
        #expect(page.body.contains("<h2>m9</h2><p class=\"alert\">no stock report stored for this machine</p>"))
        #expect(page.body.contains("\(Pages.localTime(soon)): check and unload"))
        #expect(!page.body.contains("\(Pages.localTime(later)): check"))
        #expect(!page.body.contains("action=\"/par\""))
        #expect(try ann.get("/pick-list?route=north%201").body.contains("action=\"/par\""))
        #expect(try dan.get("/pick-list?route=south").status == 404)
        // A par level cleared: back to capacity.
        #expect(try ann.post("/par", [("csrf", csrf), ("route", "north 1"), ("machine", "m2"), ("slot", "A1"), ("par", "")]).status == 303)
        #expect(try dan.get("/pick-list.csv?route=north%201").body.contains("m2,A1,cola,2,8,,0,6,\r\n"))
    }

    @Test(arguments: Engine.allCases)
    func theFleetPageShowsStatesAlertsAndSalesCashAndCardApart(_ engine: Engine) throws {
        let rig = try OfficeRig(engine)
        defer { rig.stop() }
        let hour: Int64 = 3_600_000
        let today = rig.noon - hour
        let threeDaysAgo = rig.noon - 72 * hour
        let tenDaysAgo = rig.noon - 240 * hour
        var events: [IncomingEvent] = []
        var seq: Int64 = 0
        func vend(_ number: Int, at: Int64, price: String, outcome: String, payment: String?) {
            seq += 1
            events.append(officeEvent("m1", seq, "vend-started", at: at, #","vend":\#(number),"slot":"A1","product":"cola","amount":"\#(price)""#))
            seq += 1
            events.append(
                officeEvent(
                    "m1", seq, "vend-ended", at: at + 1000,
                    #","vend":\#(number),"slot":"A1","product":"cola","amount":"\#(price)","outcome":"\#(outcome)""#
                        + (payment.map { #","payment":"\#($0)""# } ?? "")))
        }
        vend(1, at: today, price: "1200", outcome: "sold", payment: "cash")
        vend(2, at: today, price: "1500", outcome: "sold", payment: "cashless1")
        vend(3, at: threeDaysAgo, price: "1200", outcome: "sold", payment: "cash")
        vend(4, at: tenDaysAgo, price: "9999", outcome: "sold", payment: "cash")
        vend(5, at: today, price: "1200", outcome: "not-dropped", payment: nil)
        vend(6, at: today, price: "1200", outcome: "sold", payment: "free-cashless1")
        vend(7, at: threeDaysAgo, price: "2000", outcome: "sold", payment: "cashless2")
        seq += 1
        events.append(officeEvent("m1", seq, "slot-fault", at: today, #","slot":"B2","on":true,"reason":"motor jam""#))
        seq += 1
        events.append(officeEvent("m1", seq, "slot-fault", at: today, #","slot":"B3","on":true,"reason":"motor jam""#))
        seq += 1
        events.append(officeEvent("m1", seq, "slot-fault", at: today + 1, #","slot":"B3","on":false,"reason":"cleared by tech""#))
        events.append(officeEvent("m2", 1, "coin-credited", at: today, #","amount":"500""#))
        events.append(officeEvent("m2", 3, "coin-credited", at: today, #","amount":"500""#))
        _ = try rig.store.commit(
            events: events,
            retained: [
                RetainedUpdate(
                    machine: "m1", subject: "state", payload: #"{"machine":"m1","online":true,"state":"in-service","currency":"KRW","at":\#(today)}"#),
                RetainedUpdate(machine: "m2", subject: "state", payload: #"{"machine":"m2","online":false,"state":"offline"}"#),
                stockUpdate(
                    "m1",
                    [
                        SlotPosition(slot: "A1", product: "cola", price: "1200", available: 0, stock: 0, capacity: 8, earliestExpiry: nil),
                        SlotPosition(slot: "A2", product: "water", price: "900", available: 3, stock: 5, capacity: 10, earliestExpiry: today),
                    ]),
                RetainedUpdate(
                    machine: "m1", subject: "zones/cold", payload: "{}",
                    columns: .zone(
                        ZonePosition(
                            zone: "cold", kind: "cold", health: "locked", temperature: "9.5", sensorFault: nil, setPoint: "4", relayOn: true,
                            maxReached: "9.5", since: today, cause: "above 5 °C for 4 h", at: today))),
                RetainedUpdate(
                    machine: "m1", subject: "cash",
                    payload:
                        #"{"machine":"m1","currency":"KRW","coinsIn":"4000","sales":"2400","refunds":"0","unknownPayouts":"0","exactChangeOnly":true,"changeStock":[{"value":"500","count":12}]}"#,
                    columns: .cash(
                        CashPosition(
                            currency: "KRW", coinsIn: "4000", sales: "2400", refunds: "0", billsIn: nil, changePaid: nil, unknownPayouts: "0",
                            exactChangeOnly: true))),
            ], receivedAt: rig.noon)
        var dan = try rig.loggedIn("dan")
        let page = try dan.get("/fleet")
        let row = try #require(page.body.components(separatedBy: "<tr>").first { $0.hasPrefix(#"<td><a href="/machine?id=m1">m1</a></td>"#) })
        #expect(row.contains("online</span> since \(Pages.localTime(today))<br>in-service"))
        for alert in ["A1 sold out", "A2 expired (2)", "zone cold locked (food safety)", "exact change only", "B2 out of service: motor jam"] {
            #expect(row.contains(alert), "\(alert)")
        }
        #expect(!row.contains("B3"))
        #expect(row.contains(#"<td class="n">1,200원</td><td class="n">1,500원</td><td class="n">2,400원</td><td class="n">3,500원</td>"#))
        let offline = try #require(page.body.components(separatedBy: "<tr>").first { $0.hasPrefix(#"<td><a href="/machine?id=m2">m2</a></td>"#) })
        #expect(offline.contains("offline</span>") && offline.contains("1 events missing (gaps in its sequence)"))
        // Filtered and sorted on the server.
        let alerts = try dan.get("/fleet?filter=offline").body
        #expect(alerts.contains(">m2</a></td>") && !alerts.contains(">m1</a></td>"))
        let sorted = try dan.get("/fleet?sort=week").body
        #expect(try #require(sorted.range(of: ">m1</a></td>")).lowerBound < #require(sorted.range(of: ">m2</a></td>")).lowerBound)
        // The machine page: planogram, zones, cash, recent events; prices for the operator only.
        let machine = try dan.get("/machine?id=m1").body
        for text in [
            "A2</td><td>water</td><td class=\"n\">5 / 10</td><td class=\"alert\">\(Pages.localTime(today)) (expired)</td>",
            "cold (cold)</td><td class=\"alert\">locked: above 5 °C for 4 h</td><td class=\"n\">9.5</td>",
            "<th>Exact change only</th>", "<tr><th>Tube 500원</th><td class=\"n\">12 coins</td></tr>",
            "<td>slot-fault</td><td>B3 · off · cleared by tech</td>",
        ] {
            #expect(machine.contains(text), "\(text)")
        }
        #expect(!machine.contains("Price") && !machine.contains("1,200원"))
        var ann = try rig.loggedIn("ann")
        let priced = try ann.get("/machine?id=m1").body
        #expect(priced.contains("<td>A1</td><td>cola</td><td class=\"n\">1,200원</td><td class=\"n\">0 / 8</td>"))
        #expect(try dan.get("/machine?id=m9").status == 404)
        let searched = try dan.get("/fleet?q=M2").body
        #expect(searched.contains(">m2</a></td>") && !searched.contains(">m1</a></td>"))
    }

    /// The machine's own word in its retained state: events piling up in its outbox, an audit no
    /// route driver has read (docs/office.md, alerts); an offline machine's will says neither.
    @Test func theStateMessageRaisesOutboxAndDEXAlerts() throws {
        let rig = try OfficeRig(.sqlite)
        defer { rig.stop() }
        let day: Int64 = 86_400_000
        func state(_ machine: String, online: Bool = true, _ fields: String) -> RetainedUpdate {
            RetainedUpdate(
                machine: machine, subject: "state",
                payload: #"{"machine":"\#(machine)","online":\#(online),"state":"in-service","currency":"KRW","at":\#(rig.noon)\#(fields)}"#)
        }
        _ = try rig.store.commit(
            events: [],
            retained: [
                state("m1", #","outbox":250,"dex":{"lastReadAt":\#(rig.noon - 20 * day)}"#),
                state("m2", #","outbox":99,"dex":{"lastReadAt":\#(rig.noon - 13 * day)}"#),
                state("m3", #","outbox":0,"dex":{}"#),
                state("m4", online: false, #","outbox":5000,"dex":{}"#),
                state("m5", ""),
            ], receivedAt: rig.noon)
        var dan = try rig.loggedIn("dan")
        let rows = try dan.get("/fleet").body.components(separatedBy: "<tr>")
        func row(_ machine: String) throws -> String {
            try #require(rows.first { $0.hasPrefix(#"<td><a href="/machine?id=\#(machine)">\#(machine)</a></td>"#) })
        }
        #expect(try row("m1").contains("250 events waiting in its outbox") && row("m1").contains("DEX audit not read for 20 days"))
        #expect(try !row("m2").contains("outbox") && !row("m2").contains("DEX"), "below the limits (100 events, 14 days)")
        #expect(try row("m3").contains("DEX audit never read") && !row("m3").contains("outbox"))
        #expect(try !row("m4").contains("outbox") && !row("m4").contains("DEX"), "offline: the store has only its will")
        #expect(try !row("m5").contains("outbox") && !row("m5").contains("DEX"), "no DEX port, no events kept")
        let alerting = try dan.get("/fleet?filter=alerts").body
        #expect(alerting.contains(">m1</a></td>") && alerting.contains(">m3</a></td>") && !alerting.contains(">m2</a></td>"))
    }

    /// The fleet page's slot alerts read the partial index of schema 8 on both engines, not every
    /// slot of the fleet: the query must repeat the index's condition word for word.
    @Test(arguments: Engine.allCases)
    func theSlotAlertsReadTheirPartialIndex(_ engine: Engine) throws {
        let rig = try OfficeRig(engine)
        defer { rig.stop() }
        let sql = try rig.openSQL()
        let plan: String
        switch engine {
        case .sqlite:
            plan = try sql.rows("EXPLAIN QUERY PLAN " + FleetOverview.slotAlerts, [.integer(rig.noon)]).map {
                $0.compactMap { $0 }.joined(separator: " ")
            }
            .joined(separator: "\n")
        case .postgresql:
            // An empty table is read whole anyway: forbid that to see whether the index can serve.
            _ = try sql.rows("SET enable_seqscan = off", [])
            plan = try sql.rows("EXPLAIN " + FleetOverview.slotAlerts, [.integer(rig.noon)]).map { $0.compactMap { $0 }.joined() }.joined(
                separator: "\n")
        }
        #expect(plan.contains("machine_slots_alerts"), "\(plan)")
    }
}
