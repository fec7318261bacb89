import Foundation
import Testing
import VendControl
import VendTelemetry
import VenddTestSupport

/// keep_until_stored against a real Mosquitto: a test client plays the fleet store, reading the
/// events and publishing the retained `stored` acknowledgement. vendd's outbox empties on that
/// acknowledgement only, and what the store withholds is sent again, unchanged.
@Suite(.oneRealProcessTestAtATime) struct StoreAcknowledgementTests {
    static let stored = "vendd/m1/stored"

    /// The broker, a client reading m1's events as the store would, and m1 with `keep_until_stored`,
    /// restocked (an empty machine takes no coins) and given `coins`: its events, numbered 1…total.
    private func machineWithStore(_ rig: FleetRig, coins: [String]) throws -> (DaemonHarness, FleetSubscriber, total: UInt64) {
        try rig.broker.start()
        let store = try FleetSubscriber(
            broker: rig.broker, topics: ["vendd/m1/events/#", "vendd/m1/backlog"], clientID: "test-store", user: MosquittoBroker.storeUser)
        let daemon = try rig.machine("m1", keepUntilStored: true)
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        for coin in coins { try daemon.send(.sim(.coin(amount: coin))) }
        return (daemon, store, try #require(try daemon.status().fleetOutbox?.lastSeq))
    }

    @Test func theOutboxEmptiesOnlyOnTheStoresAcknowledgement() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        let (daemon, store, total) = try machineWithStore(rig, coins: ["100", "100", "100"])
        defer { store.stop() }
        let events = try rig.waitForEvents(store, "every event at the store") { $0.count == Int(total) }
        #expect(events.compactMap(\.seq).sorted() == Array(1...total), "numbered 1… without a gap")
        // The broker has them all (PUBACK): they stay until the store says so.
        var outbox = try daemon.waitUntil("every event delivered to the broker") { $0.fleetOutbox?.awaitingStore == Int(total) }.fleetOutbox
        #expect(outbox?.pending == Int(total) && outbox?.storedSeq == nil, "\(String(describing: outbox))")

        try rig.publish(as: MosquittoBroker.storeUser, Self.stored, #"{"seq": 2, "at": 1}"#, retain: true)
        outbox = try daemon.waitUntil("the store's first acknowledgement") { $0.fleetOutbox?.storedSeq == 2 }.fleetOutbox
        #expect(outbox?.pending == Int(total) - 2)

        // Nonsense and a number from the future: logged with the reason, nothing leaves.
        try rig.publish(as: MosquittoBroker.storeUser, Self.stored, "stored everything", retain: true)
        try rig.publish(as: MosquittoBroker.storeUser, Self.stored, #"{"seq": \#(total + 5)}"#, retain: true)
        try daemon.waitForLog("sequence \(total + 5) is beyond the last one this machine gave (\(total))")
        #expect(
            daemon.log.contains("the store's acknowledgement on vendd/m1/stored is ignored: not a {\"seq\": N} acknowledgement: 'stored everything'"))
        outbox = try daemon.status().fleetOutbox
        #expect(outbox?.pending == Int(total) - 2 && outbox?.storedSeq == 2, "\(String(describing: outbox))")

        // Another machine cannot acknowledge for m1: the ACL drops it, and the store's next one counts.
        try rig.publish(as: "m2", Self.stored, #"{"seq": \#(total)}"#, retain: true)
        try rig.publish(as: MosquittoBroker.storeUser, Self.stored, #"{"seq": 3}"#, retain: true)
        outbox = try daemon.waitUntil("the store's second acknowledgement") { $0.fleetOutbox?.storedSeq == 3 }.fleetOutbox
        #expect(outbox?.pending == Int(total) - 3, "m2's acknowledgement reached vendd")
        // What the technician sees, and the JSON against docs/vendctl.md.
        let text = try daemon.vendctl("status").output
        #expect(
            text.contains("fleet    store acknowledged up to event 3 of \(total); \(Int(total) - 3) event(s) the broker has wait for it"), "\(text)")
        #expect(try DocumentedSchemas().violations(of: "status", in: daemon.vendctl("status", "--json").output) == [])
        try rig.publish(as: MosquittoBroker.storeUser, Self.stored, #"{"seq": \#(total)}"#, retain: true)
        _ = try daemon.waitUntil("the outbox empty") { $0.fleetOutbox?.pending == 0 && $0.fleetOutbox?.storedSeq == total }
        #expect(try daemon.stop() == 0)
    }

    @Test func withheldAcknowledgementsAreSentAgainUnchangedAfterReconnectingAndRestarting() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        let (daemon, store, total) = try machineWithStore(rig, coins: ["500", "500", "500", "500"])
        defer { store.stop() }
        _ = try rig.waitForEvents(store, "the first deliveries") { $0.count == Int(total) }
        _ = try daemon.waitUntil("the broker has them") { $0.fleetOutbox?.awaitingStore == Int(total) }

        // The store says nothing. A broker restart: vendd reconnects and sends them all again, in
        // a backlog message (they are far fewer than EventBatch.maxEvents).
        rig.broker.stop()
        try rig.broker.start()
        try waitForDeliveries(store, each: 2, of: total)
        let backlog = store.lines.filter { $0.topic == "vendd/m1/backlog" }
        #expect(backlog.last?.payload.split(separator: "\n").count == Int(total), "\(store.text)")
        // vendd restarted: the outbox is what the store has not acknowledged, sent once more.
        #expect(try daemon.stop() == 0)
        try daemon.start()
        try waitForDeliveries(store, each: 3, of: total)
        #expect(try daemon.status().fleetOutbox?.pending == Int(total))

        try rig.publish(as: MosquittoBroker.storeUser, Self.stored, #"{"seq": \#(total)}"#, retain: true)
        _ = try daemon.waitUntil("the outbox empty") { $0.fleetOutbox?.pending == 0 }
        // A later event takes the next number, and waits for its own acknowledgement.
        try daemon.send(.price(slot: "A1", amount: "1300"))
        let status = try daemon.waitUntil("the new event delivered") { $0.fleetOutbox?.awaitingStore == 1 }
        #expect(status.fleetOutbox?.lastSeq == total + 1 && status.fleetOutbox?.pending == 1)
        // As it happened, on its own topic: the backlog is only for what waited.
        try store.waitUntil("the price change") { $0.last?.topic == "vendd/m1/events/price-changed" }
        #expect(try daemon.stop() == 0)
    }

    /// The retained state says how many events wait (for the office's backlog alert): sent again
    /// when the count reaches another order of magnitude, up or down, not at every event.
    @Test func theRetainedStateFollowsTheOutboxBacklogByOrderOfMagnitude() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        let (daemon, store, total) = try machineWithStore(rig, coins: Array(repeating: "100", count: 6))
        defer { store.stop() }
        #expect(total >= 10, "six coins make at least 10 events")
        let state = try FleetSubscriber(broker: rig.broker, topic: "vendd/m1/state", clientID: "test-m1-state")
        defer { state.stop() }
        func outboxes(_ lines: [(topic: String, payload: String)]) -> [Int?] {
            lines.map { try? JSONDecoder().decode(MachineStateMessage.self, from: Data($0.payload.utf8)).outbox }
        }
        try state.waitUntil("a backlog of 10 or more in the state") { (outboxes($0).last ?? 0) ?? 0 >= 10 }
        try rig.publish(as: MosquittoBroker.storeUser, Self.stored, #"{"seq": \#(total - 2)}"#, retain: true)
        _ = try daemon.waitUntil("the store's acknowledgement") { $0.fleetOutbox?.pending == 2 }
        try state.waitUntil("the drained backlog in the state") { outboxes($0).last == 2 }
        #expect(try daemon.stop() == 0)
    }

    /// A broker whose ACL predates the backlog topic refuses the batch (MQTT 5 PUBACK "not
    /// authorized"): vendd says what to allow and sends the events one by one, losing none.
    @Test func aBrokerThatRefusesTheBacklogGetsTheEventsOneByOne() throws {
        let rig = try FleetRig(acl: MosquittoBroker.acl.replacingOccurrences(of: "pattern write vendd/%u/backlog\n", with: ""))
        defer { rig.tearDown() }
        let (daemon, store, total) = try machineWithStore(rig, coins: ["500", "500"])
        defer { store.stop() }
        _ = try rig.waitForEvents(store, "the first deliveries") { $0.count == Int(total) }
        rig.broker.stop()
        try rig.broker.start()
        try daemon.waitForLog("the broker refused a backlog message on vendd/m1/backlog: is this machine allowed to publish there")
        try waitForDeliveries(store, each: 2, of: total)
        #expect(!store.lines.contains { $0.topic == "vendd/m1/backlog" }, "the broker let a backlog through")
        try rig.publish(as: MosquittoBroker.storeUser, Self.stored, #"{"seq": \#(total)}"#, retain: true)
        _ = try daemon.waitUntil("the outbox empty") { $0.fleetOutbox?.pending == 0 }
        #expect(try daemon.stop() == 0)
    }

    /// Waits until each of `count` events (seq 1…count) has reached the store `each` times, every
    /// time with the same id and contents.
    private func waitForDeliveries(_ store: FleetSubscriber, each: Int, of count: UInt64, timeout: TimeInterval = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let events = try store.events.map { try JSONDecoder().decode(TelemetryEvent.self, from: Data($0.payload.utf8)) }
            let bySeq = Dictionary(grouping: events, by: { $0.seq ?? 0 })
            if (1...count).allSatisfy({ (bySeq[$0]?.count ?? 0) >= each }) {
                for (seq, deliveries) in bySeq {
                    #expect(Set(deliveries).count == 1, "seq \(seq) delivered with different contents: \(deliveries)")
                }
                return
            }
            guard Date() < deadline else {
                throw HarnessError("timed out waiting for \(count) events delivered \(each) times: \(bySeq.mapValues(\.count))")
            }
            usleep(100_000)
        }
    }
}
