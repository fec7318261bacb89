import Foundation
import Logging
import Synchronization
import Testing
import VendFleetIngest
import VendFleetStore
import VendMQTT
import VenddTestSupport

@testable import VendOffice

/// vendd's side of the `price` command on a real broker, answering as `answer` says (nil:
/// silent), for the office's tests on both engines; the real vendd answers in
/// VenddProcessTests' OfficePriceProcessTests.
final class AnsweringMachine: Sendable {
    private let client: MQTTClient
    private let shared: Shared

    private final class Shared: Sendable {
        let received = Mutex<[String]>([])
        let subscribed = Atomic<Bool>(false)
        let client = Mutex<MQTTClient?>(nil)
    }

    /// The payloads of the commands received, as text.
    var received: [String] { shared.received.withLock { $0 } }

    /// `replyTopic`: where it answers instead of the request's response topic; `delay`: how long
    /// it takes to answer.
    init(
        _ machine: String, port: Int, replyTopic: String? = nil, delay: Duration = .zero, answer: @escaping @Sendable (String) -> String?
    ) throws {
        let shared = Shared()
        self.shared = shared
        client = try MQTTClient(clientID: "machine-\(machine)", cleanStart: true) { event in
            switch event {
            case .connected(nil):
                try? shared.client.withLock { $0 }?.subscribe("vendd/\(machine)/cmd/price")
                shared.subscribed.store(true, ordering: .releasing)
            case .message(let message):
                let text = String(decoding: message.payload, as: UTF8.self)
                shared.received.withLock { $0.append(text) }
                if let reply = answer(text), let topic = replyTopic ?? message.responseTopic {
                    usleep(UInt32(delay.components.seconds * 1_000_000 + delay.components.attoseconds / 1_000_000_000_000))
                    try? shared.client.withLock { $0 }?.reply(topic, Array(reply.utf8), correlation: message.correlation)
                }
            default: break
            }
        }
        shared.client.withLock { $0 = client }
        try client.start(MQTTEndpoint(host: "127.0.0.1", port: port, tls: false))
        try waitUntil("machine \(machine) subscribes") { shared.subscribed.load(ordering: .acquiring) }
        usleep(100_000)
    }

    deinit { client.stop() }
}

@Suite("Remote prices in the office", .serialized, .timeLimit(.minutes(3)))
struct OfficePriceTests {
    @Test func aPriceIsWholeMinorUnitsOrDefaultAndGoesAsTheMachinesDecimal() throws {
        #expect(try PriceEntry.parse(" 1300 ").get() == .minorUnits(1300))
        #expect(try PriceEntry.parse("default").get() == .configured)
        #expect(PriceEntry.minorUnits(150).payloadText(currency: "EUR", digits: 2) == "1.50")
        #expect(PriceEntry.minorUnits(5).payloadText(currency: "EUR", digits: 2) == "0.05")
        #expect(PriceEntry.minorUnits(1300).payloadText(currency: "KRW", digits: 0) == "1300")
        #expect(PriceEntry.configured.payloadText(currency: "EUR", digits: 2) == "default")
        for (text, reason) in [
            ("", "no price given"), ("1.50", "'1.50' is not a whole number"), ("1,300", "'1,300' is not a whole number"),
            ("-1", "'-1' is not a whole number"), ("0", "a price must be at least 1"), ("1000000000001", "'1000000000001' is too large"),
            ("٣", "'٣' is not a whole number"), ("Default", "'Default' is not a whole number"),
        ] {
            switch PriceEntry.parse(text) {
            case .success(let entry): Issue.record("'\(text)' taken as \(entry)")
            case .failure(let refusal): #expect(refusal.description.hasPrefix(reason), "\(refusal)")
            }
        }
    }

    @Test func aLineIsAListFrom1To999AndAPaymentVenddKnows() throws {
        #expect(try PriceLineChoice.parse(list: "", payment: "").get() == .standard)
        #expect(try PriceLineChoice.parse(list: " 2 ", payment: "cash").get() == PriceLineChoice(list: 2, payment: "cash"))
        #expect(try PriceLineChoice.parse(list: "999", payment: "cashless2").get() == PriceLineChoice(list: 999, payment: "cashless2"))
        for (list, payment, reason) in [
            ("0", "", "list 0 is not a price list number (1 to 999)"), ("1000", "", "'1000' is not a price list"),
            ("2.5", "", "'2.5' is not a price list"), ("-2", "", "'-2' is not a price list"),
            ("2", "bitcoin", "unknown payment 'bitcoin' (known: any, cash, cashless, cashless1, cashless2)"),
            ("2", "Cash", "unknown payment 'Cash'"),
        ] {
            switch PriceLineChoice.parse(list: list, payment: payment) {
            case .success(let line): Issue.record("'\(list)' '\(payment)' taken as \(line)")
            case .failure(let refusal): #expect(refusal.description.hasPrefix(reason), "\(refusal)")
            }
        }
    }

    /// A change naming a list and payment reaches each machine with them, and is kept with them;
    /// one of list 1 for every payment is sent as before lists.
    @Test(arguments: Engine.allCases)
    func aChangeOfAListAndPaymentIsSentAndKeptWithThem(_ engine: Engine) throws {
        let link = try CommandsOnBroker()
        defer { link.stop() }
        let (broker, commands) = (link.broker, link.commands)
        let m1 = try AnsweringMachine("m1", port: broker.port) { _ in
            #"{"v":1,"ok":true,"message":"slot A1 price on list 2 for cash no line of its own → 800원"}"#
        }
        let rig = try OfficeRig(engine, commands: commands, commandTimeout: .seconds(2))
        defer { rig.stop() }
        let cola = [SlotPosition(slot: "A1", product: "cola", price: "1200", available: 1, stock: 1, capacity: 8, earliestExpiry: nil)]
        _ = try rig.store.commit(events: [], retained: [stockUpdate("m1", cola)], receivedAt: rig.noon)
        var ann = try rig.loggedIn("ann")
        let form = try ann.get("/prices")
        let csrf = try #require(form.csrf)
        #expect(form.body.contains(#"<option value="cashless1">card reader 1</option>"#) && form.body.contains(#"name="list""#))

        let slot = try ann.post(
            "/prices/slot", [("csrf", csrf), ("machine", "m1"), ("slot", "A1"), ("price", "800"), ("list", "2"), ("payment", "cash")])
        let page = try ann.get(try #require(slot.header("Location"), "\(slot.status) \(slot.body)")).body
        #expect(page.contains(" on list 2, cash. "), "\(page)")
        #expect(page.contains(#"<td class="online">done</td><td>slot A1 price on list 2 for cash no line of its own → 800원</td>"#))
        #expect(m1.received == [#"{"list":2,"payment":"cash","price":"800","sender":"office:ann","slot":"A1"}"#])
        let product = try ann.post("/prices/product", [("csrf", csrf), ("product", "cola"), ("price", "700"), ("list", "3"), ("machine", "m1")])
        #expect(product.status == 303, "\(product.body)")
        #expect(m1.received.last == #"{"list":3,"payment":"any","price":"700","sender":"office:ann","slot":"A1"}"#)
        _ = try ann.post("/prices/slot", [("csrf", csrf), ("machine", "m1"), ("slot", "A1"), ("price", "1300"), ("list", ""), ("payment", "any")])
        #expect(m1.received.last == #"{"price":"1300","sender":"office:ann","slot":"A1"}"#, "list 1 for every payment, as before")

        // Refused before anything is sent.
        let bad = try ann.post(
            "/prices/slot", [("csrf", csrf), ("machine", "m1"), ("slot", "A1"), ("price", "800"), ("list", "2"), ("payment", "bitcoin")])
        #expect(bad.status == 400 && bad.body.contains("unknown payment &#39;bitcoin&#39;"), "\(bad.body)")
        #expect(m1.received.count == 3)

        // Kept with the line: the latest changes and the audit log say it.
        #expect(try ann.get("/prices").body.contains("cola on list 2, cash</td>"))
        #expect(try ann.get("/audit").body.contains("m1 A1 → 800 (list 2, cash)"))
        let stored = try rig.openSQL().rows("SELECT price_list, payment FROM office_price_changes ORDER BY requested_at, price", [])
        #expect(stored.map { $0.compactMap { $0 } }.sorted { $0.joined() < $1.joined() } == [["1", "any"], ["2", "cash"], ["3", "any"]])
    }

    /// Migration 9 on a store of schema 8: a change kept before it set list 1 for every payment.
    @Test(arguments: Engine.allCases)
    func aChangeKeptBeforeSchema9IsOfList1ForEveryPayment(_ engine: Engine) throws {
        let rig = try OfficeRig(engine)
        defer { rig.stop() }
        let sql = try rig.openSQL()
        try sql.rows("ALTER TABLE office_price_changes DROP COLUMN price_list", [])
        try sql.rows("ALTER TABLE office_price_changes DROP COLUMN payment", [])
        try sql.rows("DELETE FROM schema_migrations WHERE version = 9", [])
        try sql.rows(
            """
            INSERT INTO office_price_changes (change_id, machine, slot, product, price, currency, requested_by, requested_at, outcome, answer)
            VALUES ('c1', 'm1', 'A1', 'cola', '1300', 'KRW', 'ann', 1, 'done', 'slot A1 price 1,200원 → 1,300원')
            """, [])
        // Opened again, as vendstore's next start: the columns are added, with their defaults.
        let records = OfficeRecords(try rig.openSQL())
        #expect(try records.priceChange("c1").map(\.line) == [.standard])
        #expect(try rig.openSQL().rows("SELECT version FROM schema_migrations WHERE version = 9", []).count == 1)
    }

    @Test(arguments: Engine.allCases)
    func eachMachinesAnswerIsShownAndKept(_ engine: Engine) throws {
        let link = try CommandsOnBroker()
        defer { link.stop() }
        let (broker, commands) = (link.broker, link.commands)
        let m1 = try AnsweringMachine("m1", port: broker.port) { _ in #"{"v":1,"ok":true,"message":"slot A1 price 1,200원 → 1,300원"}"# }
        let m2 = try AnsweringMachine("m2", port: broker.port) { _ in
            #"{"v":1,"ok":false,"error":{"code":"bad-request","message":"slot A1 is not for sale here"}}"#
        }
        let m3 = try AnsweringMachine("m3", port: broker.port) { _ in nil }
        let m4 = try AnsweringMachine("m4", port: broker.port) { _ in #"{"v":1,"ok":true,"message":"slot A1 price 1.20 EUR → 1.50 EUR"}"# }
        let rig = try OfficeRig(engine, commands: commands, commandTimeout: .seconds(1))
        defer { rig.stop() }
        let cola = { (price: String) in
            [SlotPosition(slot: "A1", product: "cola", price: price, available: 1, stock: 1, capacity: 8, earliestExpiry: nil)]
        }
        _ = try rig.store.commit(
            events: [],
            retained: [
                stockUpdate("m1", cola("1200")), stockUpdate("m2", cola("1200")), stockUpdate("m3", cola("1200")),
                RetainedUpdate(machine: "m4", subject: "stock", payload: "{}", columns: .stock(currency: "EUR", slots: cola("1.20"))),
            ], receivedAt: rig.noon)
        var ann = try rig.loggedIn("ann")
        let csrf = try #require(try ann.get("/prices").csrf)

        let across = try ann.post(
            "/prices/product", [("csrf", csrf), ("product", "cola"), ("price", "1300"), ("machine", "m1"), ("machine", "m2"), ("machine", "m3")])
        let location = try #require(across.header("Location"), "\(across.status) \(across.body)")
        let page = try ann.get(location).body
        #expect(page.contains(#"<td class="online">done</td><td>slot A1 price 1,200원 → 1,300원</td>"#), "\(page)")
        #expect(page.contains(#"<td class="alert">refused</td><td>slot A1 is not for sale here</td>"#))
        #expect(page.contains(#"<td class="alert">no-answer</td><td>no answer within 1 s"#))
        #expect(m1.received == [#"{"price":"1300","sender":"office:ann","slot":"A1"}"#])
        #expect(m2.received.count == 1 && m3.received.count == 1, "the refusing and the silent machine got the command")

        // 150 minor units of EUR reach the machine as vendd reads amounts.
        let euro = try ann.post("/prices/slot", [("csrf", csrf), ("machine", "m4"), ("slot", "A1"), ("price", "150")])
        let euroPage = try ann.get(try #require(euro.header("Location"))).body
        #expect(euroPage.contains("1.50 EUR</td><td class=\"online\">done</td>"), "\(euroPage)")
        #expect(m4.received == [#"{"price":"1.50","sender":"office:ann","slot":"A1"}"#])
        let mixed = try ann.post("/prices/product", [("csrf", csrf), ("product", "cola"), ("price", "100"), ("machine", "m1"), ("machine", "m4")])
        #expect(mixed.status == 400 && mixed.body.contains("different currencies (EUR: m4; KRW: m1)"), "\(mixed.body)")
        #expect(m1.received.count == 1 && m4.received.count == 1, "nothing sent for a refused form")

        // Kept: the latest changes with their answers, and the audit log with the user.
        let prices = try ann.get("/prices").body
        #expect(prices.contains("1 done, 1 no-answer, 1 refused") && prices.contains("1 done</td>"), "\(prices)")
        let audit = try ann.get("/audit").body
        for entry in ["price-change-sent", "price-changed", "price-refused", "price-no-answer", "m2 A1 → 1300: slot A1 is not for sale here"] {
            #expect(audit.contains(entry), "\(entry)")
        }
        #expect(try ann.get("/price-change?id=nothing").status == 404)
    }

    /// A price change waits for the machines holding no lock, on its own thread: a page asked
    /// for meanwhile is answered before the change is.
    @Test func aChangeWaitingForASilentMachineHoldsUpNoOtherPage() throws {
        let link = try CommandsOnBroker()
        defer { link.stop() }
        let (broker, commands) = (link.broker, link.commands)
        let silent = try AnsweringMachine("m1", port: broker.port) { _ in nil }
        let rig = try OfficeRig(.sqlite, commands: commands, commandTimeout: .seconds(8))
        defer { rig.stop() }
        let cola = [SlotPosition(slot: "A1", product: "cola", price: "1200", available: 1, stock: 1, capacity: 8, earliestExpiry: nil)]
        _ = try rig.store.commit(events: [], retained: [stockUpdate("m1", cola)], receivedAt: rig.noon)
        var ann = try rig.loggedIn("ann")
        var dan = try rig.loggedIn("dan")
        let csrf = try #require(try ann.get("/prices").csrf)
        let changeAnswered = DispatchSemaphore(value: 0)
        let change = Thread { [ann] in
            var ann = ann
            _ = try? ann.post("/prices/slot", [("csrf", csrf), ("machine", "m1"), ("slot", "A1"), ("price", "1300")])
            changeAnswered.signal()
        }
        change.start()
        try waitUntil("the machine receives the command") { !silent.received.isEmpty }
        #expect(try dan.get("/fleet").status == 200)
        #expect(changeAnswered.wait(timeout: .now()) == .timedOut, "the fleet page waited for the price change")
        #expect(changeAnswered.wait(timeout: .now() + 20) == .success, "the change gives up on the silent machine")
    }
}
