import Foundation
import Testing
import VendFleetStore
import VendTelemetry
import VenddTestSupport

/// Mosquitto + the vendstore binary + a publisher acting as two machines: every good event in
/// the database once, the retained acks right, every bad message logged and nothing else lost.
@Suite("vendstore end to end", .serialized, .timeLimit(.minutes(5)))
struct IngestEndToEndTests {
    @Test func eventsAreStoredOnceGapsWaitAndBadInputIsLoggedNotStored() throws {
        let rig = try StoreProcessRig()
        defer { rig.tearDown() }
        try rig.startStore()
        let link = try TestMachineLink(rig.broker.url, name: "machines")
        try link.publish("vendd/m1/state", #"{"state":"in-service","at":1790000000000}"#, retain: true)
        try link.publish("vendd/m1/events/vend-ended", eventPayload("m1", 1))
        try link.publish("vendd/m1/events/vend-ended", eventPayload("m1", 2))
        try link.publish("vendd/m1/events/vend-ended", eventPayload("m1", 2))  // a resend
        try link.publish("vendd/m1/events/vend-ended", eventPayload("m1", 4))  // 3 is late
        try link.publish("vendd/m1/events/vend-ended", "{\"id\": \"x\", not json")
        try link.publish("vendd/m1/events/vend-ended", #"{"id":"no-seq","type":"vend-ended","at":1}"#)
        try link.publish("vendd/m1/events/refund", eventPayload("m1", 5, type: "vend-ended"))
        // m2's credentials, a body claiming m1: the topic decides, m1 is untouched.
        try link.publish("vendd/m2/events/vend-ended", eventPayload("m1", 1, id: "from-m2"))
        try link.publish("vendd/m1/events/vend-ended", eventPayload("m1", 2, id: "impostor"))

        try waitUntil("m1 is acknowledged up to 2 and m2 up to 1") { link.ackedSeq("m1") == 2 && link.ackedSeq("m2") == 1 }
        let store = try SQLiteFleetStore(path: rig.databasePath, now: 0)
        #expect(try store.gaps().map { [$0.first, $0.last] } == [[3, 3]])

        try link.publish("vendd/m1/events/vend-ended", eventPayload("m1", 3))
        try waitUntil("the gap is filled") { link.ackedSeq("m1") == 4 }
        #expect(try store.gaps().isEmpty)
        let m1 = try store.events(of: "m1", from: 1, limit: 100)
        #expect(m1.map(\.seq) == [1, 2, 3, 4])
        #expect(m1.map(\.id) == ["m1-1", "m1-2", "m1-3", "m1-4"])
        let m2 = try store.events(of: "m2", from: 1, limit: 100)
        #expect(m2.map(\.id) == ["from-m2"])
        #expect(try store.latest(of: "m1")["state"] == #"{"state":"in-service","at":1790000000000}"#)

        // A newcomer (vendd after a restart) reads the acks retained.
        let newcomer = try TestMachineLink(rig.broker.url, name: "newcomer")
        try waitUntil("retained acks arrive") { newcomer.ackedSeq("m1") == 4 && newcomer.ackedSeq("m2") == 1 }
        // What vendd decodes: VendTelemetry's StoredAcknowledgement, `at` in milliseconds.
        let decoded = try newcomer.ack("m1").map { try JSONDecoder().decode(StoredAcknowledgement.self, from: Data($0.utf8)) }
        #expect(decoded?.seq == 4)
        #expect((decoded?.at ?? 0) > 1_700_000_000_000)

        rig.stopStore()
        let log = rig.log
        #expect(log.contains("refused an event on vendd/m1/events/vend-ended: not an event"))
        #expect(log.contains("'seq' is missing"))
        #expect(log.contains("the payload's type 'vend-ended' is not the topic's 'refund'"))
        #expect(log.contains("the payload names machine 'm1' but arrived on machine 'm2'"))
        #expect(log.contains("conflict: sequence 2 is held with id m1-2; another event (id impostor)"))
        #expect(log.split(separator: "\n").contains { $0.contains("refused an event") && $0.contains("machine=m1") })
    }

    @Test func eventsSentWhileVendstoreIsDownArriveThroughItsSession() throws {
        let rig = try StoreProcessRig()
        defer { rig.tearDown() }
        try rig.startStore()
        let link = try TestMachineLink(rig.broker.url, name: "machine")
        try link.publish("vendd/m1/events/vend-ended", eventPayload("m1", 1))
        try waitUntil("the first ack") { link.ackedSeq("m1") == 1 }
        rig.stopStore()
        for seq in Int64(2)...50 { try link.publish("vendd/m1/events/vend-ended", eventPayload("m1", seq)) }
        try rig.startStore()
        try waitUntil("the broker hands over what it kept") { link.ackedSeq("m1") == 50 }
    }
}
