import Foundation
import Testing
import VendControl
import VenddTestSupport

/// Issue 35 through the real vendd and vendctl: expired perishable stock stops its slot until
/// `vendctl unload`; `sim key` answers once the machine is in service mode; `price` follows the
/// file's price rule.
@Suite(.oneRealProcessTestAtATime) struct NewcomerTechnicianProcessTests {
    /// `days` days before now, as `--loaded` takes it (vendctl runs with TZ=UTC).
    static func loaded(daysAgo days: Int) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm"
        return formatter.string(from: Date().addingTimeInterval(-Double(days) * 86_400))
    }

    @Test func expiredPerishableStockStopsItsSlotUntilUnloaded() throws {
        let daemon = try DaemonHarness(config: "config/examples/chilled-food.yaml")
        defer { daemon.tearDown() }
        try daemon.start()
        // The sandwiches (3 days) were loaded 4 days ago; the milk today.
        try daemon.requireSuccess(daemon.vendctl("restock", "A1", "--loaded", Self.loaded(daysAgo: 4)))
        try daemon.requireSuccess(daemon.vendctl("restock", "A2"))
        let stopped = try daemon.waitUntil("slot A1 stopped") { $0.slot("A1")?.expired != nil }
        #expect(stopped.slot("A1")?.available == 0 && stopped.slot("A1")?.stock == 8)
        #expect(stopped.slot("A2")?.expired == nil && stopped.slot("A2")?.available == 10)
        let schemas = try DocumentedSchemas()
        #expect(try schemas.violations(of: "status", in: daemon.vendctl("--json", "status").output) == [])
        #expect(try daemon.vendctl("status").output.contains("EXPIRED, not selling: A1 (since "))
        try daemon.waitForLog("slot A1 (sandwich) stopped selling: 8 item(s) past their shelf life")

        for _ in 0..<5 { try daemon.requireSuccess(daemon.vendctl("sim", "coin", "1.00")) }
        let refused = try daemon.vendctl("select", "A1")
        #expect(refused.status == 1)
        #expect(refused.errors == "vendctl: slot A1's items are past their shelf life: a technician must unload them (vendctl unload A1)\n")

        let unloaded = try daemon.vendctl("unload", "A1")
        #expect(unloaded.status == 0, "\(unloaded.errors)")
        #expect(unloaded.output == "unloaded A1 8→0; 8 expired item(s) discarded ($36.00 at the slot's price); slot A1 sells again\n")
        let after = try daemon.status()
        #expect(after.slot("A1")?.expired == nil && after.slot("A1")?.stock == 0)
        #expect(after.books.discardedItems == 8 && after.books.discardedValue == "36.00" && after.books.discardedValueText == "$36.00")
        #expect(try daemon.vendctl("status").output.contains("discarded 8 expired item(s) so far, worth $36.00 at their prices"))
        #expect(try schemas.violations(of: "status", in: daemon.vendctl("--json", "status").output) == [])
        let empty = try daemon.vendctl("unload", "A1")
        #expect(empty.status == 1 && empty.errors == "vendctl: slot A1 holds no item to unload\n")
        #expect(try daemon.vendctl("unload", "A1", "0").status == 64)

        // Fresh sandwiches sell again.
        try daemon.requireSuccess(daemon.vendctl("restock", "A1"))
        #expect(try daemon.vendctl("select", "A1").status == 0)
    }

    @Test func simKeyAnswersOnceTheMachineIsInServiceMode() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.requireSuccess(daemon.vendctl("sim", "key", "on"))
        #expect(try daemon.vendctl("status").output.hasPrefix("Corridor B, 2nd floor: service mode (the service key is on)"))
        try daemon.requireSuccess(daemon.vendctl("sim", "key", "off"))
        #expect(try daemon.vendctl("status").output.hasPrefix("Corridor B, 2nd floor: in service\n"))
        // The same answer without a process to start in between: the switch is debounced (20 ms).
        for _ in 0..<5 {
            #expect(try daemon.send(.sim(.key(on: true))).ok)
            let on = try daemon.status()
            #expect(on.state == "service-mode" && on.serviceKey == true, "\(on.state)")
            #expect(try daemon.send(.sim(.key(on: false))).ok)
            let off = try daemon.status()
            #expect(off.state == "in-service" && off.serviceKey == false, "\(off.state)")
        }
    }

    @Test func aReloadThatLowersACapacityBelowTheStockWarnsAndRestockAgreesWithStatus() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.requireSuccess(daemon.vendctl("restock", "A1"))
        let text = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        let lowered = text.replacingOccurrences(
            of: "    price: 1200\n    capacity: 8\n    button: { line: 2,", with: "    price: 1200\n    capacity: 4\n    button: { line: 2,")
        #expect(lowered != text)
        try lowered.write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        try daemon.waitForLog(
            "slot A1 holds 8 items, above its new capacity of 4: they stay and sell; restock adds nothing until it holds fewer than 4")
        let status = try daemon.waitUntil("the new capacity") { $0.slot("A1")?.capacity == 4 }
        #expect(status.slot("A1")?.stock == 8 && status.slot("A1")?.available == 8)
        let restock = try daemon.vendctl("restock", "A1")
        #expect(restock.status == 1)
        #expect(
            restock.errors
                == "vendctl: slot A1 holds 8 items, above its capacity of 4: they stay and sell; restock adds nothing until it holds fewer than 4\n")
    }

    @Test func aPriceAboveTheMaximumCreditIsRefusedAsCheckConfigRefusesIt() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let refused = try daemon.vendctl("price", "A1", "99999999999")
        #expect(refused.status == 64)
        #expect(
            refused.errors
                == "vendctl: slot A1: 99,999,999,999원 is above machine.maximum_credit (10,000원), so it could never be paid\n")
        #expect(try daemon.status().slot("A1")?.price == "1200")
    }
}
