import Foundation
import Testing
import VendControl
import VendTelemetry
import VenddTestSupport

/// The price lists in the retained `stock` message, against a real Mosquitto broker: each slot's
/// lines beyond its list-1 price as the machine charges them, the lists' names and the bands; a
/// line set at run time or a reload sends the message again.
@Suite(.oneRealProcessTestAtATime) struct FleetPriceListTests {
    /// The sample with list 2 ("happy hour", Mondays and Fridays 15:00 to 17:00 UTC): A1 at 1000
    /// on it for every payment, its product (banana milk) at 900 on it for cash.
    static func priced(_ sample: String) -> String {
        sample.replacingOccurrences(
            of: "    name: \"Banana Milk\"\n", with: "    name: \"Banana Milk\"\n    prices:\n      - { list: 2, payment: cash, price: 900 }\n"
        )
        .replacingOccurrences(
            of: "    product: banana-milk\n    price: 1200\n",
            with: "    product: banana-milk\n    price: 1200\n    prices:\n      - { list: 2, price: 1000 }\n")
            + "\npricing:\n  time_zone: UTC\n  lists:\n    - { list: 2, name: \"happy hour\" }\n"
            + "  bands:\n    - { list: 2, days: [mon, fri], from: \"15:00\", to: \"17:00\" }\n"
    }

    static func line(_ list: Int, _ payment: String, _ price: String) -> StockMessage.PriceLine {
        StockMessage.PriceLine(list: list, payment: payment, price: price)
    }

    @Test func theListsAreRetainedInStockAndALineSetAtRunTimeSendsThemAgain() throws {
        let schemas = try DocumentedSchemas("docs/mqtt.md")
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let stock = try FleetSubscriber(broker: rig.broker, topic: "vendd/m1/stock", clientID: "test-m1-stock")
        defer { stock.stop() }
        let daemon = try rig.machine("m1", edit: Self.priced)
        try daemon.start()
        _ = try daemon.waitUntil("connected") { $0.fleetOutbox?.connected == true }

        /// Waits for a stock message whose A1 has `lines`; returns it, checked against the schema.
        func stockMessage(withA1 lines: [StockMessage.PriceLine]?, _ what: String) throws -> StockMessage {
            var found: StockMessage?
            try stock.waitUntil(what) { received in
                found = received.compactMap { try? JSONDecoder().decode(StockMessage.self, from: Data($0.payload.utf8)) }
                    .last { $0.slots.first { $0.slot == "A1" }?.priceLines == lines }
                return found != nil
            }
            for (_, payload) in stock.lines { #expect(try schemas.violations(of: "stock", in: payload) == [], "\(payload)") }
            return try #require(found)
        }

        // The file's: A1's own list-2 line for every payment and its product's for cash; the
        // other slots have none, and list 1 stays `price`.
        let first = try stockMessage(withA1: [Self.line(2, "any", "1000"), Self.line(2, "cash", "900")], "the file's lines")
        #expect(first.slots.first { $0.slot == "A1" }?.price == "1200")
        #expect(first.slots.filter { $0.slot != "A1" }.allSatisfy { $0.priceLines == nil }, "\(first.slots)")
        #expect(first.priceLists == [StockMessage.PriceList(list: 2, name: "happy hour")])
        #expect(first.bands == [StockMessage.Band(list: 2, days: ["mon", "fri"], from: "15:00", to: "17:00")])

        // A line set at run time replaces the product's for the same list and payment, and is
        // sent at once (no event of its own wakes the link); list 1 for cash comes first.
        let set = try daemon.vendctl("price", "A1", "700", "--list", "2", "--payment", "cash")
        #expect(set.status == 0, "\(set.errors)")
        _ = try stockMessage(withA1: [Self.line(2, "any", "1000"), Self.line(2, "cash", "700")], "the run-time line")
        #expect(try daemon.vendctl("price", "A1", "1100", "--list", "1", "--payment", "cash").status == 0)
        _ = try stockMessage(
            withA1: [Self.line(1, "cash", "1100"), Self.line(2, "any", "1000"), Self.line(2, "cash", "700")], "list 1 for cash")
        // Back to the file's: the product's line shows again.
        #expect(try daemon.vendctl("price", "A1", "default", "--list", "2", "--payment", "cash").status == 0)
        _ = try stockMessage(withA1: [Self.line(1, "cash", "1100"), Self.line(2, "any", "1000"), Self.line(2, "cash", "900")], "default")

        // A reload without the lists: the message says so, though no event was sent for it.
        var config = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        let pricing = try #require(config.range(of: "\npricing:"))
        let mqtt = try #require(config.range(of: "\nmqtt:"))
        config.removeSubrange(pricing.lowerBound..<mqtt.lowerBound)
        try config.replacingOccurrences(of: "    prices:\n      - { list: 2, price: 1000 }\n", with: "")
            .replacingOccurrences(of: "    prices:\n      - { list: 2, payment: cash, price: 900 }\n", with: "")
            .write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        try daemon.waitForLog("configuration reloaded")
        let reloaded = try stockMessage(withA1: [Self.line(1, "cash", "1100")], "the reload")
        #expect(reloaded.priceLists == nil && reloaded.bands == nil)
        #expect(try daemon.stop() == 0)
    }

    /// The `price` command names a line as `vendctl price --list --payment` does; an unknown
    /// list or payment is refused, saying what there is.
    @Test func thePriceCommandSetsALineOfAListAndPayment() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let daemon = try rig.machine("m1", commands: ["price"], edit: Self.priced)
        try daemon.start()
        _ = try daemon.waitUntil("connected") { $0.fleetOutbox?.connected == true }
        let replies = try FleetSubscriber(
            broker: rig.broker, topic: "vendd/m1/reply/#", clientID: "operator-replies", user: MosquittoBroker.operatorUser)
        defer { replies.stop() }
        let stock = try FleetSubscriber(broker: rig.broker, topic: "vendd/m1/stock", clientID: "test-m1-stock")
        defer { stock.stop() }

        let commands = [
            #"{"slot":"A1","price":"800","list":2,"payment":"cash","sender":"alice"}"#,
            #"{"slot":"A1","price":"800","list":4,"payment":"cash","sender":"alice"}"#,
            #"{"slot":"A1","price":"800","list":1000,"sender":"alice"}"#,
            #"{"slot":"A1","price":"800","list":2,"payment":"bitcoin","sender":"alice"}"#,
            #"{"slot":"A1","price":"1300","sender":"alice"}"#,
            #"{"slot":"A1","price":"1100","list":1,"payment":"cashless","sender":"alice"}"#,
        ]
        for (index, command) in commands.enumerated() {
            try rig.publish(as: MosquittoBroker.operatorUser, "vendd/m1/cmd/price", command, responseTopic: "vendd/m1/reply/alice-\(index)")
        }
        try replies.waitUntil("every answer") { lines in
            commands.indices.allSatisfy { index in lines.contains { $0.topic == "vendd/m1/reply/alice-\(index)" } }
        }
        func answer(_ index: Int) throws -> ControlResponse {
            let payload = try #require(replies.lines.first { $0.topic == "vendd/m1/reply/alice-\(index)" }?.payload)
            return try JSONDecoder().decode(ControlResponse.self, from: Data(payload.utf8))
        }
        #expect(try answer(0).message == "slot A1 price on list 2 for cash no line of its own → 800원")
        #expect(try answer(1).error?.message.contains("there is no price list 4: pricing.lists has list 1 and 2") == true)
        #expect(try answer(2).error?.message == "list 1000 is not a price list number (1 to 999)")
        #expect(try answer(3).error?.message == "unknown payment 'bitcoin' (known: any, cash, cashless, cashless1, cashless2)")
        #expect(try answer(4).message == "slot A1 price 1,200원 → 1,300원")
        #expect(try answer(5).message == "slot A1 price on list 1 for cashless no line of its own → 1,100원")
        for index in 1...3 { #expect(try answer(index).error?.code == .badRequest) }

        // What the machine now charges, retained for the office.
        try stock.waitUntil("the lines set") { lines in
            lines.last?.payload.contains(
                #""price":"1300","priceLines":[{"list":1,"payment":"cashless","price":"1100"},{"list":2,"payment":"any","price":"1000"},{"list":2,"payment":"cash","price":"800"}]"#
            ) == true
        }
        #expect(daemon.log.contains("MQTT command 'price' from alice"))
        #expect(try daemon.stop() == 0)
    }
}
