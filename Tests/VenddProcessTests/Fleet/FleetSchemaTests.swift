import Foundation
import Testing
import VendControl
import VenddTestSupport

/// Everything vendd publishes, against the schemas in docs/mqtt.md.
@Suite(.oneRealProcessTestAtATime) struct FleetSchemaTests {
    @Test func everyPublishedMessageMatchesItsDocumentedSchema() throws {
        let schemas = try DocumentedSchemas("docs/mqtt.md")
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let everything = try FleetSubscriber(broker: rig.broker, topic: "vendd/m1/#", clientID: "schema-everything")
        defer { everything.stop() }
        // A machine that gives change, so that payouts, fill mode and its float are published too;
        // with price lists, so that `stock` carries them.
        let daemon = try rig.machine("m1", commands: ["report"]) { PayoutProcessTests.changeGiving(FleetPriceListTests.priced($0)) }
        try daemon.start()
        _ = try daemon.waitUntil("connected") { $0.fleetOutbox?.connected == true }
        try daemon.send(.restock(slot: "all", count: nil))
        for _ in 0..<3 { try daemon.send(.sim(.coin(amount: "500"))) }
        try daemon.send(.sim(.drop(slot: "A4", succeeds: false)))
        try daemon.send(.select(slot: "A4"))
        _ = try daemon.waitUntil("the failed vend") { $0.books.failedVends == 1 && $0.vendInProgress == nil }
        try daemon.send(.select(slot: "A4"))
        _ = try daemon.waitUntil("the sale") { $0.books.itemsSold == 1 && $0.vendInProgress == nil }
        try daemon.send(.price(slot: "A1", amount: "1300"))
        try daemon.send(.priceLine(slot: "A1", amount: "1250", list: 2, payment: .cash))
        for _ in 0..<3 { try daemon.send(.sim(.coin(amount: "500"))) }
        try daemon.send(.select(slot: "A1"))
        _ = try daemon.waitUntil("the change paid") { $0.books.itemsSold == 2 && $0.payoutInProgress == nil && $0.vendInProgress == nil }
        try daemon.send(.service(on: true))
        try daemon.send(.fill(on: true))
        try daemon.send(.sim(.coin(amount: "100")))
        try daemon.send(.fill(on: false))
        try daemon.send(.payoutTest(amount: "600"))
        _ = try daemon.waitUntil("the payout test") { $0.payoutInProgress == nil }
        #expect(try daemon.send(.cashCollect).collection?.collection == 1)
        try daemon.send(.service(on: false))
        try rig.publish(as: "operator", "vendd/m1/cmd/report", #"{"sender":"schema test"}"#)
        _ = try daemon.waitUntil("the outbox empty") { $0.fleetOutbox?.pending == 0 }
        #expect(try daemon.stop() == 0)
        try everything.waitUntil("the last state: offline") { lines in
            lines.last { $0.topic == "vendd/m1/state" }?.payload.contains(#""online":false"#) == true
        }

        var seen: Set<String> = []
        for (topic, payload) in everything.lines {
            let levels = topic.split(separator: "/")
            let schema: String
            switch levels.count > 2 ? String(levels[2]) : "" {
            case "events":
                schema = "event"
                seen.insert(String(levels[3]))
            case "state", "stock", "cash": schema = String(levels[2])
            case "cmd": schema = "command"
            case "reply":
                #expect(try DocumentedSchemas().violations(of: "status", in: payload) == [], "\(topic)")
                seen.insert("reply")
                continue
            default:
                Issue.record("unexpected topic \(topic)")
                continue
            }
            seen.insert(schema)
            #expect(try schemas.violations(of: schema, in: payload) == [], "\(topic): \(payload)")
        }
        for expected in [
            "coin-credited", "credit-changed", "vend-started", "vend-ended", "stock-changed", "price-changed",
            "payout-started", "payout-ended", "fill-mode", "float-added", "service-mode", "state", "stock",
            "cash", "command", "reply", "cash-collected",
        ] {
            #expect(seen.contains(expected), "nothing was published for \(expected): \(seen.sorted())")
        }
        let stock = try #require(everything.lines.last { $0.topic == "vendd/m1/stock" })
        for field in [
            #""priceLines":[{"list":2,"payment":"any","price":"1000"},{"list":2,"payment":"cash","price":"1250"}]"#, #""priceLists":"#, #""bands":"#,
        ] {
            #expect(stock.payload.contains(field), "\(stock.payload)")
        }
        #expect(
            everything.lines.last { $0.topic == "vendd/m1/state" }?.payload.contains(#""online":false"#) == true,
            "a stopped vendd says it is offline")
    }
}
