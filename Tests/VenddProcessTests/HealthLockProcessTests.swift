import Foundation
import Testing
import VendControl
import VendDEX
import VenddTestSupport

/// The food-safety lock through the real vendd: a simulated cabinet that warms past its limit
/// locks its perishable slots; the lock survives SIGKILL and a restart, and only a technician's
/// `zone service` in service mode clears it. The DEX audit's events (EJH health timer, EJJ
/// refrigeration) say when each began and ended, across the restart.
@Suite(.oneRealProcessTestAtATime) struct HealthLockProcessTests {
    /// The example food machine with the chilled zone read every second and its windows short.
    static func harness() throws -> DaemonHarness {
        try DaemonHarness(config: "config/examples/chilled-food.yaml", edit: fastHealth)
    }

    /// The chilled zone read every second, its trip and windows short.
    static func fastHealth(_ text: String) -> String {
        text.replacingOccurrences(
            of: "    health: { limit: 5, trip_s: 900 }",
            with: """
                    read_interval_s: 1
                    start_delay_s: 0
                    health: { limit: 5, trip_s: 2, recovery_after_door_s: 1, recovery_after_power_on_s: 1, sensor_grace_s: 30 }
                """)
    }

    @Test func aLockoutSurvivesSIGKILLAndOnlyServiceClearsIt() throws {
        let daemon = try Self.harness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        try daemon.send(.sim(.temp(zone: "chilled", value: "9")))
        let locked = try daemon.waitUntil("the chilled zone to lock") { $0.zones?.first?.lock != nil }
        let lock = try #require(locked.zones?.first?.lock)
        #expect(lock.cause == "temperature past the limit of 5.0 °C")
        try daemon.waitForLog("zone chilled locked")
        let during = try Self.events(daemon) { _ in true }
        #expect(during.map(\.code) == ["EJH_1", "EJJ_1"], "chilled is the file's first of two zones")
        #expect(during.allSatisfy { $0.active && $0.occurrences == 1 })
        #expect(try DocumentedSchemas().violations(of: "sales", in: daemon.vendctl("--json", "report").output) == [])

        daemon.signal(SIGKILL)
        _ = try daemon.waitForExit()
        try daemon.start()
        let restarted = try daemon.waitUntil("the zone's first reading") { $0.zones?.first?.temperature != nil }
        #expect(restarted.zones?.first?.lock == lock, "the lock is journaled state: it survives a power cut")
        // The cabinet is cold again after the restart: the lock stays all the same.
        #expect(restarted.zones?.first?.temperature == "3.0")
        let recovered = try Self.events(daemon) { $0.first { $0.code == "EJJ_1" }?.active == false }
        #expect(recovered.first { $0.code == "EJH_1" }?.active == true, "back within the limit, but still locked")
        // The kiosk and the LCD tell "not available" from "sold out" by this.
        #expect(restarted.slot("A2")?.healthLock == "chilled" && restarted.slot("A2")?.available == 0)
        #expect(restarted.slot("A3")?.healthLock == nil)

        for _ in 0..<2 { try daemon.send(.sim(.coin(amount: "1.00"))) }
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
        let sales = try #require(try daemon.send(.sales(since: nil)).sales)
        let lockEvent = try #require(sales.events?.first { $0.code == "EJH_1" })
        #expect(!lockEvent.active && lockEvent.endedAt != nil && lockEvent.sinceLastRead == 1)
        let audit = DEXWriter.file(try DEXAudit(sales, communicationID: "VDD0000001", asset: "1"))
        #expect(audit.contains("\r\nEA2*EJH_1*1*1**0\r\n") && audit.contains("\r\nEA2*EJJ_1*1*1**0\r\n"))
    }

    /// Polls the sales report until its events meet `condition`.
    static func events(_ daemon: DaemonHarness, _ condition: ([SalesReport.Event]) -> Bool) throws -> [SalesReport.Event] {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let events = try daemon.send(.sales(since: nil)).sales?.events ?? []
            if condition(events) { return events }
            guard Date() < deadline else { throw HarnessError("timed out waiting for the DEX events; last: \(events)") }
            usleep(20_000)
        }
    }
}
