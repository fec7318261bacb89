import Foundation
import Testing
import VendFleetStore
import VenddTestSupport

/// Remote prices end to end: real vendd processes (simulated hardware) on the ACL'd broker, a
/// real vendstore with an `office:` section storing their reports, and its back office driven over
/// HTTP. The store's broker user writes only `vendd/+/cmd/price` (MosquittoBroker's ACL).
@Suite(.oneRealProcessTestAtATime) struct OfficePriceProcessTests {
    static let operatorPassword = "ann's long password"
    static let driverPassword = "dan's long password"

    /// A started vendstore with an office on `rig`'s broker (as the store's user), its operator
    /// `ann` and driver `dan`; the office's port and the SQLite file.
    static func startStore(_ rig: FleetRig) throws -> (store: VendstoreProcess, port: Int, database: String) {
        let port = try LocalPort.reserve()
        let database = rig.directory.path + "/fleet.db"
        let config = rig.directory.path + "/vendstore.yaml"
        let store = VendstoreProcess(configPath: config, logPath: rig.directory.path + "/vendstore.log")
        try store.start(
            config: """
                mqtt:
                  broker: \(rig.broker.url)
                  ca_file: \(rig.broker.caFile)
                  credentials_file: \(try rig.broker.credentialsFile(for: MosquittoBroker.storeUser))
                  client_id: vendstore-test
                database:
                  sqlite: \(database)
                office:
                  listen: 127.0.0.1:\(port)
                  currencies:
                    - code: KRW
                      format: "{amount}원"

                """)
        for (user, role, password) in [("ann", "operator", Self.operatorPassword), ("dan", "driver", Self.driverPassword)] {
            let added = try VendstoreProcess.user(["add", user, "--role", role], config: config, password: password)
            guard added.status == 0 else { throw HarnessError("vendstore user add \(user): \(added)") }
        }
        return (store, port, database)
    }

    /// Waits until the store holds each machine's stock report.
    static func waitForStock(_ machines: [String], in database: String, store: VendstoreProcess) throws {
        let fleet = try SQLiteFleetStore(path: database, now: 0)
        let deadline = Date().addingTimeInterval(15)
        while try !machines.allSatisfy({ try !fleet.slots(of: $0).isEmpty }) {
            guard Date() < deadline else { throw HarnessError("the store did not get \(machines)' stock within 15 s:\n\(store.log)") }
            usleep(20_000)
        }
    }

    @Test func anOperatorsPriceChangesReachTheMachinesAndEachAnswerIsShown() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let (store, port, database) = try Self.startStore(rig)
        defer { store.stop(SIGKILL) }
        // m1 and m2 take the price command; m3's file does not allow it.
        let m1 = try rig.machine("m1", commands: ["price"])
        let m2 = try rig.machine("m2", commands: ["price"])
        let m3 = try rig.machine("m3")
        for machine in [m1, m2, m3] { try machine.start() }
        try Self.waitForStock(["m1", "m2", "m3"], in: database, store: store)
        // m2 goes offline; the store still knows its slots.
        #expect(try m2.stop() == 0)

        var ann = OfficeHTTPClient(port: port)
        #expect(try ann.logIn("ann", Self.operatorPassword).status == 303)
        let prices = try ann.get("/prices")
        #expect(prices.status == 200 && prices.body.contains("A product across machines"), "\(prices.body)")
        let csrf = try #require(prices.csrf)

        /// Posts a change; the result page it leads to.
        func change(_ path: String, _ fields: [(String, String)]) throws -> OfficeHTTPClient.Answer {
            let answer = try ann.post(path, [("csrf", csrf)] + fields)
            let location = try #require(answer.header("Location"), "\(answer.status): \(answer.body)")
            #expect(answer.status == 303 && location.hasPrefix("/price-change?id="))
            return try ann.get(location)
        }

        // One slot: m1 confirms, and its own status says the new price.
        let done = try change("/prices/slot", [("machine", "m1"), ("slot", "A1"), ("price", "1300")])
        #expect(done.body.contains(">done<") && done.body.contains("slot A1 price 1,200원 → 1,300원"), "\(done.body)")
        #expect(try m1.status().slot("A1")?.price == "1300")
        try m1.waitForLog("MQTT command 'price' from office:ann")

        // vendd refuses, with its own reason: a slot it does not have, a price it could never take.
        let unknown = try change("/prices/slot", [("machine", "m1"), ("slot", "Z9"), ("price", "1300")])
        #expect(unknown.body.contains(">refused<") && unknown.body.contains("no slot Z9 (slots: A1, A2"), "\(unknown.body)")
        let dear = try change("/prices/slot", [("machine", "m1"), ("slot", "A2"), ("price", "20000")])
        #expect(dear.body.contains(">refused<") && dear.body.contains("above machine.maximum_credit"), "\(dear.body)")
        #expect(try m1.status().slot("A2")?.price == "1200")

        // A product across machines: m1 confirms, m3 refuses (not allowed there), m2 is offline.
        let started = Date()
        let across = try change("/prices/product", [("product", "cola"), ("price", "1600"), ("machine", "m1"), ("machine", "m2"), ("machine", "m3")])
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 4.5 && waited < 10, "the office waits 5 s for the offline machine, no longer: \(waited) s")
        let rows = across.body.components(separatedBy: "<tr><td>").dropFirst()
        #expect(rows.count == 3, "\(across.body)")
        let byMachine = Dictionary(rows.map { (String($0.prefix { $0 != "<" }), $0) }, uniquingKeysWith: { $1 })
        #expect(byMachine["m1"]?.contains(">done<") == true && byMachine["m1"]?.contains("slot A4 price 1,500원 → 1,600원") == true)
        #expect(byMachine["m2"]?.contains(">no-answer<") == true && byMachine["m2"]?.contains("no answer within 5 s") == true)
        #expect(
            byMachine["m3"]?.contains(">refused<") == true
                && byMachine["m3"]?.contains("command &#39;price&#39; is not allowed on this machine") == true)
        #expect(try m1.status().slot("A4")?.price == "1600")
        #expect(try m3.status().slot("A4")?.price == "1500")

        // Through a route, back to the configured price.
        #expect(try ann.post("/routes", [("csrf", csrf), ("name", "north"), ("machines", "m1")]).status == 303)
        let route = try change("/prices/product", [("product", "cola"), ("price", "default"), ("route", "north")])
        #expect(route.body.contains("slot A4 price 1,600원 → 1,500원") && route.body.contains("configured price"), "\(route.body)")

        // Hostile and wrong input: each a clear refusal, nothing sent.
        for (path, fields, reason) in [
            ("/prices/slot", [("machine", "m1"), ("slot", "A1"), ("price", "1.50")], "&#39;1.50&#39; is not a whole number"),
            ("/prices/slot", [("machine", "m1"), ("slot", "A1"), ("price", "-5")], "&#39;-5&#39; is not a whole number"),
            ("/prices/slot", [("machine", "m1"), ("slot", "A1"), ("price", "0")], "a price must be at least 1"),
            ("/prices/slot", [("machine", "m1"), ("slot", "A1"), ("price", "")], "no price given"),
            ("/prices/slot", [("machine", "m1"), ("slot", "A1"), ("price", "99999999999999")], "is too large"),
            ("/prices/slot", [("machine", "m1/#"), ("slot", "A1"), ("price", "100")], "no stock report from machine &#39;m1/#&#39;"),
            ("/prices/slot", [("machine", "m9"), ("slot", "A1"), ("price", "100")], "no stock report from machine &#39;m9&#39;"),
            ("/prices/slot", [("machine", "m1"), ("slot", "A 1"), ("price", "100")], "is not a slot"),
            ("/prices/product", [("product", "cola"), ("price", "100")], "tick at least one machine"),
            (
                "/prices/product", [("product", "<script>"), ("price", "100"), ("machine", "m1")],
                "none of the machines chosen holds a product &#39;&lt;script&gt;&#39;"
            ),
            ("/prices/product", [("product", "cola"), ("price", "100"), ("route", "nowhere")], "there is no route &#39;nowhere&#39;"),
        ] {
            let answer = try ann.post(path, [("csrf", csrf)] + fields)
            #expect(answer.status == 400 && answer.body.contains(reason), "\(fields): \(answer.status) \(answer.body)")
        }
        // A slot full of JSON and HTML metacharacters goes as data: the machine refuses it.
        let odd = try change("/prices/slot", [("machine", "m1"), ("slot", "A1\"}<b>"), ("price", "100")])
        #expect(odd.body.contains("no slot A1&quot;}&lt;b&gt; (slots:"), "\(odd.body)")
        #expect(try m1.status().slot("A1")?.price == "1300")
        #expect(try ann.post("/prices/slot", [("machine", "m1"), ("slot", "A1"), ("price", "100")]).status == 403, "no CSRF token")

        // The driver: no link, no form, a forged POST with the driver's own token refused.
        var dan = OfficeHTTPClient(port: port)
        #expect(try dan.logIn("dan", Self.driverPassword).status == 303)
        let fleetPage = try dan.get("/fleet")
        #expect(!fleetPage.body.contains("/prices"))
        #expect(try dan.get("/prices").status == 403)
        let danCSRF = try #require(fleetPage.csrf)
        let forged = try dan.post("/prices/slot", [("csrf", danCSRF), ("machine", "m1"), ("slot", "A1"), ("price", "100")])
        #expect(forged.status == 403 && forged.body.contains("Operators only"))
        #expect(try dan.get("/price-change?id=x").status == 403)
        #expect(try m1.status().slot("A1")?.price == "1300", "nothing changed")

        // The audit log names who did what, and each answer.
        let audit = try ann.get("/audit").body
        #expect(audit.contains("price-changed") && audit.contains("m1 A1 → 1300: slot A1 price 1,200원 → 1,300원"), "\(audit)")
        #expect(audit.contains("price-no-answer") && audit.contains("price-refused") && audit.contains("price-change-sent"))
        #expect(!audit.contains("<td>dan</td>"), "the driver changed nothing")
        #expect(try m1.stop() == 0)
        #expect(try m3.stop() == 0)
        #expect(store.stop())
    }

    /// The price lists end to end: a real vendd with lists reports them, the machine page shows
    /// them, and a change of list 2 for cash reaches the machine and comes back in its stock; a
    /// list the machine does not define is refused in its own words.
    @Test func aLineOfAListIsShownChangedOnTheMachineAndShownAgain() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let (store, port, database) = try Self.startStore(rig)
        defer { store.stop(SIGKILL) }
        let m1 = try rig.machine("m1", commands: ["price"], edit: FleetPriceListTests.priced)
        try m1.start()
        try Self.waitForStock(["m1"], in: database, store: store)
        var ann = OfficeHTTPClient(port: port)
        #expect(try ann.logIn("ann", Self.operatorPassword).status == 303)
        func row(_ list: String, _ payment: String, _ price: String) -> String {
            #"<tr><td>A1</td><td>banana-milk</td><td>\#(list)</td><td>\#(payment)</td><td class="n">\#(price)</td></tr>"#
        }
        let before = try ann.get("/machine?id=m1").body
        #expect(before.contains(row("2 (happy hour)", "every payment", "1,000원")), "\(before)")
        #expect(
            before.contains(row("2 (happy hour)", "cash", "900원")) && before.contains("<tr><td>2 (happy hour)</td><td>mon, fri 15:00–17:00</td></tr>")
        )

        let csrf = try #require(try ann.get("/prices").csrf)
        let answer = try ann.post(
            "/prices/slot", [("csrf", csrf), ("machine", "m1"), ("slot", "A1"), ("price", "800"), ("list", "2"), ("payment", "cash")])
        let page = try ann.get(try #require(answer.header("Location"), "\(answer.status): \(answer.body)")).body
        #expect(page.contains(">done<") && page.contains("slot A1 price on list 2 for cash no line of its own → 800원"), "\(page)")
        // The machine's next stock message, stored: the line it now charges by.
        let deadline = Date().addingTimeInterval(15)
        while try !ann.get("/machine?id=m1").body.contains(row("2 (happy hour)", "cash", "800원")) {
            guard Date() < deadline else {
                Issue.record("the new line did not reach the machine page within 15 s")
                break
            }
            usleep(50_000)
        }
        let unknown = try ann.post(
            "/prices/slot", [("csrf", csrf), ("machine", "m1"), ("slot", "A1"), ("price", "800"), ("list", "4"), ("payment", "cash")])
        let refused = try ann.get(try #require(unknown.header("Location"), "\(unknown.status): \(unknown.body)")).body
        #expect(refused.contains(">refused<") && refused.contains("there is no price list 4: pricing.lists has list 1 and 2"), "\(refused)")
        #expect(try m1.stop() == 0)
        #expect(store.stop())
    }

    @Test func aBrokerThatRefusesTheStoresCommandIsShownSo() throws {
        let rig = try FleetRig(acl: MosquittoBroker.acl.replacingOccurrences(of: "topic write vendd/+/cmd/price\n", with: ""))
        defer { rig.tearDown() }
        try rig.broker.start()
        let (store, port, database) = try Self.startStore(rig)
        defer { store.stop(SIGKILL) }
        let m1 = try rig.machine("m1", commands: ["price"])
        try m1.start()
        try Self.waitForStock(["m1"], in: database, store: store)
        var ann = OfficeHTTPClient(port: port)
        #expect(try ann.logIn("ann", Self.operatorPassword).status == 303)
        let csrf = try #require(try ann.get("/prices").csrf)
        let started = Date()
        let answer = try ann.post("/prices/slot", [("csrf", csrf), ("machine", "m1"), ("slot", "A1"), ("price", "1300")])
        let page = try ann.get(try #require(answer.header("Location"), "\(answer.status): \(answer.body)"))
        #expect(Date().timeIntervalSince(started) < 4, "the broker's refusal ends the wait")
        #expect(
            page.body.contains(">not-sent<") && page.body.contains("the broker refused it")
                && page.body.contains("topic write vendd/m1/cmd/price&#39; in the broker&#39;s ACL"), "\(page.body)")
        #expect(try m1.status().slot("A1")?.price == "1200")
        #expect(try m1.stop() == 0)
        #expect(store.stop())
    }
}
