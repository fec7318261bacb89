import Foundation
import Testing
import VendingCore

/// The DEX port's machine state, each check from EVA-DTS 6.1.1's words: SD105/SD106 (§2.6.1 p.42,
/// §2.8.2 p.45–46), the reads and resets EA3 reports (p.39, p.231–232), the pass code (§6.1.6
/// p.178). Journaled inputs, saved with the machine.
@Suite struct DEXStateTests {
    func sellCola(_ rig: inout Rig) {
        for _ in 0..<3 { rig.insert(500) }
        rig.select("A2")
        if let vend = rig.pendingVend { rig.apply(.vendEnded(vend, .dropped)) }
    }

    @discardableResult
    func read(_ rig: inout Rig, by terminal: String = "HHD0000001", mayReset: Bool = true) -> [Effect] {
        rig.apply(.dexRead(DEXRead(totals: rig.machine.auditTotals, terminal: terminal, mayReset: mayReset)))
    }

    /// "AUTO … The interval data will be automatically reset after each successful read
    /// transfer … This will be the default state for vending machine devices" (p.42).
    @Test func aReadInAUTOResetsTheIntervalFigures() {
        var rig = Rig()
        sellCola(&rig)
        #expect(rig.machine.dex.intervalMode == .auto)
        #expect(read(&rig).rejections.isEmpty)
        #expect(rig.machine.interimTotals.sales.count == 0)
        #expect(rig.machine.dex.reads == 1 && rig.machine.dex.resets == 1 && rig.machine.dex.readsWithReset == 1)
    }

    /// "SAVE … The interval data will not be automatically reset after each read transfer. This
    /// mode will stay in effect until an AUTO command is received" (p.42).
    @Test func aReadInSAVEResetsNothingUntilAUTO() {
        var rig = Rig()
        sellCola(&rig)
        rig.apply(.dexResetControl(interval: .save, events: nil))
        read(&rig)
        read(&rig)
        #expect(rig.machine.interimTotals.sales.count == 1, "two complete reads in SAVE: the interim figures stay")
        #expect(rig.machine.dex.reads == 2 && rig.machine.dex.resets == 0)
        rig.apply(.dexResetControl(interval: .auto, events: nil))
        read(&rig)
        #expect(rig.machine.interimTotals.sales.count == 0, "AUTO again: the next read resets")
        #expect(rig.machine.dex.resets == 1)
    }

    /// "RESET - Sending RESET is a command to the vending machine device (VMD). All interval data
    /// will be reset after the current successful SD105 transfer. Sending RESET does not change
    /// the AUTO or SAVE mode of the VMD" (p.42); p.43's visit in SAVE mode: the audit, then RESET.
    @Test func RESETResetsNowAndKeepsTheMode() {
        var rig = Rig()
        rig.apply(.dexResetControl(interval: .save, events: nil))
        sellCola(&rig)
        read(&rig)
        #expect(rig.machine.interimTotals.sales.count == 1)
        rig.apply(.dexResetControl(interval: .reset, events: nil))
        #expect(rig.machine.interimTotals.sales.count == 0 && rig.machine.interimTotals.coinsIn.minorUnits == 0)
        #expect(rig.machine.dex.intervalMode == .save, "RESET does not change the mode")
        #expect(rig.machine.dex.resets == 1, "EA310 counts resets 'via the SD105 RESET command'")
        #expect(rig.machine.dex.readsWithReset == 0 && rig.machine.dex.reads == 1)
        sellCola(&rig)
        read(&rig)
        #expect(rig.machine.interimTotals.sales.count == 1, "still SAVE")
    }

    /// SD106 works "similar to the SD105" for the events (p.45–46): SAVE keeps the events' counts
    /// across a read that resets the interval figures; RESET resets them alone.
    @Test func SD106SeparatesTheEventsFromTheIntervalFigures() {
        var rig = Rig()
        rig.apply(.slotFaultFound("A2", .jammed))
        rig.technicianClears("A2", by: "kim")
        rig.apply(.dexResetControl(interval: nil, events: .save))
        read(&rig)
        #expect(rig.machine.occurrencesSinceRead(of: .motorFault("A2")) == 1, "SD106 SAVE: the event is not reset by the read")
        rig.apply(.dexResetControl(interval: nil, events: .reset))
        #expect(rig.machine.occurrencesSinceRead(of: .motorFault("A2")) == 0)
        #expect(rig.machine.dex.resets == 1, "EA310: 'Not Event Resets' — an event reset is not counted")
    }

    /// DDCMP's security read (list 2) is a read "without reset" (EA309) that resets nothing.
    @Test func aReadThatMayNotResetIsCountedOnly() {
        var rig = Rig()
        sellCola(&rig)
        read(&rig, by: "RP", mayReset: false)
        #expect(rig.machine.interimTotals.sales.count == 1)
        #expect(rig.machine.dex.reads == 1 && rig.machine.dex.resets == 0)
        #expect(rig.machine.dex.lastRead == DEXReadRecord(at: rig.now, terminal: "RP"))
    }

    /// §6.1.6: "A newly manufactured slave has a 4 byte zero value set. A zero value grants
    /// access on every requested code … Further requests only gain access with this newly set
    /// code"; a technician clears it.
    @Test func thePassCodeIsKeptUntilCleared() {
        var rig = Rig()
        #expect(rig.machine.dex.passCode == nil && rig.machine.dex.admits([1, 2, 3, 4]) && rig.machine.dex.admits([0, 0, 0, 0]))
        rig.apply(.setDEXPassCode([1, 2, 3, 4], by: "DDCMP route person 'RP'"))
        #expect(rig.machine.dex.admits([1, 2, 3, 4]))
        #expect(!rig.machine.dex.admits([0, 0, 0, 0]) && !rig.machine.dex.admits([1, 2, 3, 5]))
        rig.apply(.setDEXPassCode(nil, by: "kim (uid 1000)"))
        #expect(rig.machine.dex.passCode == nil)
        rig.apply(.setDEXPassCode([0, 0, 0, 0], by: "HHD0000001"))
        #expect(rig.machine.dex.passCode == nil, "zeros are no code")
    }

    /// All of it is machine state: saved, restored, and absent from a machine that never used it
    /// (a file from before reads as AUTO, no reads, no code).
    @Test func theDEXStateIsSaved() throws {
        var rig = Rig()
        sellCola(&rig)
        rig.apply(.dexResetControl(interval: .save, events: .save))
        read(&rig)
        rig.apply(.setDEXPassCode([0xAA, 0, 0xEF, 0x21], by: "RP"))
        let restored = try JSON.roundTrip(rig.machine)
        #expect(restored == rig.machine)
        #expect(restored.dex.intervalMode == .save && restored.dex.reads == 1 && restored.dex.passCode == [0xAA, 0, 0xEF, 0x21])
        let old = try JSON.text(Rig().machine)
        #expect(!old.contains("\"dex\""))
        #expect(try JSONDecoder().decode(Machine.self, from: Data(old.utf8)).dex == DEXState())
    }
}
