import Foundation
import Testing
import VendControl
import VenddTestSupport

/// The food-safety lock through the real vendd: a simulated cabinet that warms past its limit
/// locks its perishable slots; the lock survives SIGKILL and a restart, and only a technician's
/// `zone service` in service mode clears it.
@Suite(.oneRealProcessTestAtATime) struct HealthLockProcessTests {
    /// The example food machine with the chilled zone read every second and its windows short.
    static func harness() throws -> DaemonHarness {
        try DaemonHarness(config: "config/examples/chilled-food.yaml") {
            $0.replacingOccurrences(
                of: "    health: { limit: 5, trip_s: 900 }",
                with: """
                        read_interval_s: 1
                        start_delay_s: 0
                        health: { limit: 5, trip_s: 2, recovery_after_door_s: 1, recovery_after_power_on_s: 1, sensor_grace_s: 30 }
                    """)
        }
    }

    @Test func aLockoutSurvivesSIGKILLAndOnlyServiceClearsIt() throws {
        let daemon = try Self.harness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        try daemon.send(.simTemp(zone: "chilled", value: "9"))
        let locked = try daemon.waitUntil("the chilled zone to lock") { $0.zones?.first?.lock != nil }
        let lock = try #require(locked.zones?.first?.lock)
        #expect(lock.cause == "temperature past the limit of 5.0 °C")
        try daemon.waitForLog("zone chilled locked")

        daemon.signal(SIGKILL)
        _ = try daemon.waitForExit()
        try daemon.start()
        let restarted = try daemon.waitUntil("the zone's first reading") { $0.zones?.first?.temperature != nil }
        #expect(restarted.zones?.first?.lock == lock, "the lock is journaled state: it survives a power cut")
        // The cabinet is cold again after the restart: the lock stays all the same.
        #expect(restarted.zones?.first?.temperature == "3.0")
        // The kiosk and the LCD tell "not available" from "sold out" by this.
        #expect(restarted.slot("A2")?.healthLock == "chilled" && restarted.slot("A2")?.available == 0)
        #expect(restarted.slot("A3")?.healthLock == nil)

        for _ in 0..<2 { try daemon.send(.simCoin(amount: "1.00")) }
        let sandwich = try daemon.client().send(.select(slot: "A2"))
        #expect(sandwich.error?.message.contains("zone chilled failed its food-safety check") == true)
        let water = try daemon.client().send(.select(slot: "A3"))
        #expect(water.ok, "water is not perishable: it keeps selling (\(water.error?.message ?? ""))")

        let outOfService = try daemon.client().send(.zoneService(zone: "chilled"))
        #expect(outOfService.error?.code == .rejected, "service clears a lock only in service mode")
        try daemon.send(.service(on: true))
        let serviced = try daemon.send(.zoneService(zone: "chilled"))
        #expect(serviced.message?.contains("zone chilled serviced by") == true)
        try daemon.send(.service(on: false))
        let afterService = try daemon.status()
        #expect(afterService.zones?.first?.lock == nil && afterService.slot("A2")?.healthLock == nil)
        try daemon.waitForLog("TECHNICIAN=")
        _ = try daemon.stop()
        try daemon.start()
        #expect(try daemon.status().zones?.first?.lock == nil, "the service is journaled too")
    }
}
