import Foundation
import Testing
import VendingCore

/// The interim ("since last DEX read") figures: the ledger less the totals of the last audit a
/// handheld acknowledged.
@Suite struct AuditReadTests {
    /// A cola sold for 1500, paid with three 500 coins.
    func sellCola(_ rig: inout Rig) {
        for _ in 0..<3 { rig.insert(500) }
        rig.select("A2")
        if let vend = rig.pendingVend { rig.apply(.vendEnded(vend, .dropped)) }
    }

    @Test func aMachineNeverReadReportsEverythingAsInterim() {
        var rig = Rig()
        sellCola(&rig)
        #expect(rig.machine.lastAuditRead == nil)
        #expect(rig.machine.interimTotals == AuditTotals(rig.machine.ledger))
        #expect(rig.machine.interimTotals.sales.count == 1)
    }

    /// The base is the totals the audit held, not the ledger when the acknowledgement came: a
    /// sale made while the audit was on the wire counts in the next read.
    @Test func aSaleDuringTheTransferCountsInTheNextRead() {
        var rig = Rig()
        sellCola(&rig)
        let sent = AuditTotals(rig.machine.ledger)
        sellCola(&rig)
        #expect(rig.apply(.auditRead(sent)).rejections.isEmpty)
        let interim = rig.machine.interimTotals
        #expect(interim.sales.count == 1 && interim.sales.amount == Fixtures.won(1_500))
        #expect(interim.bySlot["A2"]?.count == 1 && interim.coinsIn == Fixtures.won(1_500))
        #expect(AuditTotals(rig.machine.ledger).sales.count == 2, "the ledger itself is never reset")
    }

    /// Totals the ledger has not reached, or older than the base, are no acknowledged audit of
    /// this machine: refused, nothing changes.
    @Test func staleOrForeignTotalsAreRefused() {
        var rig = Rig()
        sellCola(&rig)
        let first = AuditTotals(rig.machine.ledger)
        sellCola(&rig)
        let second = AuditTotals(rig.machine.ledger)
        rig.apply(.auditRead(second))
        #expect(rig.apply(.auditRead(first)).rejections == [.staleAuditRead])
        var inflated = second
        inflated.coinsIn = inflated.coinsIn + Fixtures.won(500)
        #expect(rig.apply(.auditRead(inflated)).rejections == [.staleAuditRead])
        #expect(rig.machine.lastAuditRead == second)
    }

    /// The base is part of the saved machine, and of one restored from a file written before it.
    @Test func theBaseIsSavedAndOldStateHasNone() throws {
        var rig = Rig()
        sellCola(&rig)
        rig.apply(.auditRead(AuditTotals(rig.machine.ledger)))
        let restored = try JSON.roundTrip(rig.machine)
        #expect(restored == rig.machine && restored.interimTotals.sales.count == 0)
        // A machine never read writes no base: its file reads as one written before the base existed.
        let old = try JSON.text(Rig().machine)
        #expect(!old.contains("lastAuditRead"))
        #expect(try JSONDecoder().decode(Machine.self, from: Data(old.utf8)).lastAuditRead == nil)
    }
}
