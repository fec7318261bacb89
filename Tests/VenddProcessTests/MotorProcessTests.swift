import Foundation
import Testing
import VendControl
import VenddTestSupport

/// The 60-selection matrix machine of `config/examples/spiral-matrix.yaml`, the real vendd in
/// `--simulate` (spiral motors with cam switches), driven through vendctl.
@Suite(.oneRealProcessTestAtATime) struct MotorProcessTests {
    /// A sale, then a jam: the credit comes back, that slot is locked (and only that one), the
    /// lock survives a restart and is cleared by a technician with vendctl.
    @Test func aJamRefundsLocksTheSlotAcrossARestartUntilClearedByATechnician() throws {
        let daemon = try DaemonHarness(config: "config/examples/spiral-matrix.yaml")
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))

        // A sale: B3's motor turns once, its cam leaves home and comes back, the item drops.
        #expect(try daemon.vendctl("sim", "coin", "2.00").status == 0)
        try daemon.send(.sim(.press(slot: "B3")))
        let sold = try daemon.waitUntil("the sale") { $0.books.sales == "1.50" && $0.vendInProgress == nil }
        #expect(sold.credit == "0.50" && sold.slot("B3")?.stock == 7)
        try daemon.waitForLog("motor of slot B3 back home after")

        // A jam at C5: the cam leaves home and never comes back; the price goes back to credit.
        #expect(try daemon.vendctl("sim", "coin", "1.00").status == 0)
        #expect(try daemon.vendctl("sim", "jam", "C5").status == 0)
        try daemon.send(.sim(.press(slot: "C5")))
        let jammed = try daemon.waitUntil("the jam", timeout: 15) { $0.slot("C5")?.fault == "jammed" && $0.vendInProgress == nil }
        #expect(jammed.credit == "1.50" && jammed.books.failedVends == 1 && jammed.slot("C5")?.stock == 8)
        #expect(jammed.slot("C5")?.available == 0)
        try daemon.waitForLog("motor of slot C5 did not return home within 5000 ms")
        let refused = try daemon.vendctl("select", "C5")
        #expect(refused.status == 1 && refused.errors.contains("make another selection"), "\(refused.errors)")
        #expect(try daemon.vendctl("status").normalisedOutput.contains("out of service: C5 (jammed)"))

        // The lock is state: it survives a restart.
        #expect(try daemon.stop() == 0)
        try daemon.start()
        #expect(try daemon.status().slot("C5")?.fault == "jammed")
        // The DEX audit reports the jam as C5's dispense-motor event (EJB), active.
        #expect(try Self.audit(daemon).contains("\r\nEA2*EJB_C5*1*1**1\r\n"))

        // Nobody at the machine has freed the spiral: a clear from afar is refused.
        let fromAfar = try daemon.vendctl("slot", "clear", "C5")
        #expect(fromAfar.status == 1 && fromAfar.errors.contains("only in service mode"), "\(fromAfar.errors)")
        // The technician opens up, frees the spiral and clears the slot; the journal says who.
        #expect(try daemon.vendctl("service", "on").status == 0)
        #expect(try daemon.vendctl("sim", "free-motor", "C5").status == 0)
        let cleared = try daemon.vendctl("slot", "clear", "C5")
        #expect(cleared.output == "slot C5 back in service (jammed cleared)\n", "\(cleared.errors)")
        #expect(try daemon.vendctl("service", "off").status == 0)
        try daemon.waitForLog("slot C5 back in service (jammed cleared by")
        try daemon.send(.sim(.press(slot: "C5")))
        let after = try daemon.waitUntil("the sale after clearing") { $0.books.sales == "2.50" && $0.vendInProgress == nil }
        #expect(after.slot("C5")?.fault == nil && after.slot("C5")?.stock == 7 && after.credit == "0.50")
        let audit = try Self.audit(daemon)
        #expect(audit.contains("\r\nEA2*EJB_C5*1*1**0\r\n"), "cleared, and not yet read: still reported")
        #expect(!audit.contains("EJB_B3"), "B3 never faulted")
        #expect(try daemon.stop() == 0)
    }

    /// The audit file `vendctl audit --dex` writes.
    static func audit(_ daemon: DaemonHarness) throws -> String {
        let file = daemon.directory.path + "/audit.dex"
        let run = try daemon.vendctl("audit", "--dex", file)
        #expect(run.status == 0, "\(run.errors)")
        return try String(contentsOfFile: file, encoding: .utf8)
    }

    /// A power cut mid-turn: the spiral stops with its cam away from home. At the next start the
    /// vend it served is resolved from the journal (an unknown outcome, the credit given back by
    /// `unknown_outcome: refund-credit`) and its slot is locked for a look, never turned blindly;
    /// the other motors on the shared home line keep selling.
    @Test func aMotorFoundAwayFromHomeAfterAPowerCutLocksItsSlotAndIsNeverTurned() throws {
        let daemon = try DaemonHarness(config: "config/examples/spiral-matrix.yaml")
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "D7", count: 3))
        #expect(try daemon.vendctl("sim", "coin", "2.00").status == 0)
        // Jammed, the cam stays away for as long as the test needs to cut the power under it.
        #expect(try daemon.vendctl("sim", "jam", "D7").status == 0)
        try daemon.send(.sim(.press(slot: "D7")))
        try daemon.waitForLog("motor of slot D7 started")
        // The simulated cam keeps its position where a real one would: in the machine.
        let cams = daemon.stateDirectory + "/simulated-cams.txt"
        let deadline = Date().addingTimeInterval(5)
        while (try? String(contentsOfFile: cams, encoding: .utf8)) != "D7\n", Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(try String(contentsOfFile: cams, encoding: .utf8) == "D7\n", "the cam left home")
        daemon.signal(SIGKILL)
        _ = try daemon.waitForExit()

        try daemon.start()
        let restarted = try daemon.waitUntil("the slot locked at start") { $0.slot("D7")?.fault == "away-from-home" }
        #expect(restarted.vendInProgress == nil && restarted.books.unknownOutcomes == 1)
        #expect(restarted.credit == "2.00" && restarted.books.sales == "0.00" && restarted.slot("D7")?.stock == 3)
        // The home line is shared by all sixty motors: the journal names the one that was turning.
        try daemon.waitForLog("motor of slot D7 was turning when vendd stopped (its home line is shared): slot locked")
        let refused = try daemon.vendctl("select", "D7")
        #expect(refused.status == 1 && refused.errors.contains("make another selection"), "\(refused.errors)")
        #expect(!daemon.log.contains("motor of slot D7 started"), "no motor is powered to find out where it is")
        try daemon.send(.restock(slot: "D8", count: 1))
        try daemon.send(.sim(.press(slot: "D8")))
        let neighbour = try daemon.waitUntil("D8's sale") { $0.books.sales == "0.90" && $0.vendInProgress == nil }
        #expect(neighbour.slot("D7")?.fault == "away-from-home" && neighbour.credit == "1.10")

        #expect(try daemon.vendctl("service", "on").status == 0)
        #expect(try daemon.vendctl("sim", "free-motor", "D7").status == 0)
        #expect(try daemon.vendctl("slot", "clear", "D7").status == 0)
        #expect(try daemon.vendctl("service", "off").status == 0)
        try daemon.send(.sim(.press(slot: "D7")))
        let sold = try daemon.waitUntil("the sale after clearing") { $0.books.sales == "1.80" && $0.vendInProgress == nil }
        #expect(sold.slot("D7")?.stock == 2 && sold.credit == "0.20")
        #expect(try daemon.stop() == 0)
    }

    /// A missing motor (the cam never leaves home) is a failed vend and locks its slot too.
    @Test func aMissingMotorLocksItsSlot() throws {
        let daemon = try DaemonHarness(config: "config/examples/spiral-matrix.yaml")
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "F10", count: 2))
        #expect(try daemon.vendctl("sim", "coin", "2.00").status == 0)
        #expect(try daemon.vendctl("sim", "motor-missing", "F10").status == 0)
        try daemon.send(.sim(.press(slot: "F10")))
        let missing = try daemon.waitUntil("the missing motor") { $0.slot("F10")?.fault == "motor-missing" && $0.vendInProgress == nil }
        #expect(missing.credit == "2.00" && missing.books.sales == "0.00")
        try daemon.waitForLog("motor of slot F10 did not leave home within 1000 ms")
        #expect(try daemon.stop() == 0)
    }
}
