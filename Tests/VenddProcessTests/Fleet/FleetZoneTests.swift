import Foundation
import Testing
import VendControl
import VendTelemetry
import VenddTestSupport

/// Each temperature zone's retained message on the real broker: sent when the zone locks and
/// when it is serviced, kept by the broker for a console that subscribes later.
@Suite(.oneRealProcessTestAtATime) struct FleetZoneTests {
    @Test func aZoneLockAndItsServiceAreRetainedPerZone() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let daemon = try rig.machine("m1", config: "config/examples/chilled-food.yaml", edit: HealthLockProcessTests.fastHealth)
        try daemon.start()
        _ = try daemon.waitUntil("connected") { $0.fleetOutbox?.connected == true }
        try daemon.send(.sim(.temp(zone: "chilled", value: "9")))
        _ = try daemon.waitUntil("the chilled zone to lock") { $0.zones?.first?.lock != nil }

        // Subscribed only now: the broker hands over what it retained.
        let late = try FleetSubscriber(broker: rig.broker, topic: "vendd/m1/zones/+", clientID: "test-m1-zones")
        defer { late.stop() }
        func latest(_ zone: String) -> ZoneMessage? {
            late.lines.last { $0.topic == "vendd/m1/zones/\(zone)" }.flatMap {
                try? JSONDecoder().decode(ZoneMessage.self, from: Data($0.payload.utf8))
            }
        }
        try late.waitUntil("the chilled zone's lock, retained") { _ in latest("chilled")?.health == "locked" }
        let locked = try #require(latest("chilled"))
        #expect(locked.machine == "m1" && locked.kind == "cold" && locked.setPoint == "3.0" && locked.relayOn != nil)
        #expect(locked.maxReached == "9.0" && locked.since != nil && locked.cause == "temperature past the limit of 5.0 °C")
        try late.waitUntil("the soup zone") { _ in latest("soup")?.kind == "hot" }
        let schemas = try DocumentedSchemas("docs/mqtt.md")
        for line in late.lines { #expect(try schemas.violations(of: "zone", in: line.payload) == [], "\(line.topic): \(line.payload)") }

        try daemon.send(.sim(.temp(zone: "chilled", value: "3")))
        try daemon.send(.service(on: true))
        try daemon.send(.zoneService(zone: "chilled"))
        try late.waitUntil("the service, at once") { _ in latest("chilled")?.health == "ok" }
        #expect(latest("chilled")?.cause == nil && latest("chilled")?.maxReached == nil)
        #expect(try daemon.stop() == 0)
    }
}
