import Foundation
import Testing
import VendingCore

/// A jammed or missing motor: the money follows the failed-vend path, that slot (only) is out
/// of service, saved with the machine, until a technician clears it.
@Suite struct SlotFaultTests {
    @Test func aJamRestoresTheCreditAndLocksOnlyThatSlot() throws {
        var rig = Rig()
        rig.insert(1_500)
        rig.select("A2")
        let vend = try #require(rig.pendingVend)
        let effects = rig.apply(.vendEnded(vend, .motorJammed))
        #expect(
            effects.events == [
                .creditChanged(from: .zero(Fixtures.won), to: Fixtures.won(1_500)),
                .vendFailed(vend, slot: "A2", product: "cola", outcome: .motorJammed, creditRestored: Fixtures.won(1_500)),
                .slotFaulted("A2", .jammed),
            ])
        #expect(rig.machine.slotFaults == ["A2": .jammed])
        #expect(rig.machine.ledger.failedVends == 1)
        #expect(rig.machine.stock["A2"]?.count == 10)
        // Make another selection: A2 is refused, A1 sells.
        #expect(rig.select("A2").events == [.rejected(.slotOutOfService("A2", .jammed))])
        #expect(Rejection.slotOutOfService("A2", .jammed).description == "slot A2 is out of service (jammed): make another selection")
        rig.select("A1")
        #expect(rig.pendingVend != nil)
    }

    @Test func aMissingMotorIsPaidOutWhenFailedVendsAre() throws {
        var rig = Rig(setup: Fixtures.setup(failedVendPolicy: .payOut, payoutPolicy: .manual))
        rig.insert(1_200)
        rig.select("A1")
        let vend = try #require(rig.pendingVend)
        let effects = rig.apply(.vendEnded(vend, .motorMissing))
        #expect(effects.events.contains(.paidOut(Fixtures.won(1_200))))
        #expect(effects.events.last == .slotFaulted("A1", .motorMissing))
        #expect(rig.machine.credit.isZero)
    }

    @Test func anItemSeenToDropBeforeTheJamIsSoldAndTheSlotStillLocked() throws {
        var rig = Rig()
        rig.insert(900)
        rig.select("B1")
        let vend = try #require(rig.pendingVend)
        let effects = rig.apply(.vendEnded(vend, .droppedMotorJammed))
        #expect(effects.events.contains { if case .vendCompleted = $0 { true } else { false } })
        #expect(rig.machine.slotFaults == ["B1": .jammed])
    }

    @Test func theLockIsSavedAndClearedByATechnicianWhoIsNamed() throws {
        var rig = Rig()
        rig.apply(.slotFaultFound("A1", .awayFromHome))
        let saved = try JSONEncoder().encode(rig.machine)
        var restored = try JSONDecoder().decode(Machine.self, from: saved)
        #expect(restored.slotFaults == ["A1": .awayFromHome])
        // Someone must be at the machine to free the spiral: service mode first.
        #expect(restored.apply(.clearSlotFault("A1", by: "ana"), at: rig.now).events == [.rejected(.notInServiceMode)])
        #expect(restored.slotFaults == ["A1": .awayFromHome])
        _ = restored.apply(.setServiceMode(true), at: rig.now)
        #expect(restored.apply(.clearSlotFault("A2", by: "ana"), at: rig.now).events == [.rejected(.noSlotFault("A2"))])
        #expect(
            restored.apply(.clearSlotFault("A1", by: "ana (uid 1001)"), at: rig.now).events == [
                .slotFaultCleared("A1", .awayFromHome, by: "ana (uid 1001)")
            ])
        #expect(restored.slotFaults.isEmpty)
    }

    @Test func theFirstFaultStandsAndALockedMachineStillTakesCoinsForTheOtherSlots() {
        var rig = Rig(setup: Fixtures.setup(slots: [SlotSetup(id: "A1", product: "milk", price: Fixtures.won(1_200), capacity: 8)]))
        rig.apply(.slotFaultFound("A1", .jammed))
        rig.apply(.slotFaultFound("A1", .awayFromHome))
        #expect(rig.machine.slotFaults == ["A1": .jammed])
        // Its only slot is out of service: nothing can be bought, so coins are refused.
        #expect(!rig.machine.acceptsCoins)
        rig.technicianClears("A1", by: "ana")
        #expect(rig.machine.acceptsCoins)
    }

    @Test func stateSavedBeforeSlotFaultsExistedLoadsWithNone() throws {
        let rig = Rig()
        var object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(rig.machine)) as? [String: Any])
        object["slotFaults"] = nil
        let machine = try JSONDecoder().decode(Machine.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(machine.slotFaults.isEmpty)
    }
}
