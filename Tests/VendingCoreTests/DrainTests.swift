import Testing
import VendingCore

/// Reload and shutdown drain the machine through the ordered path: from `setDraining(true)` on,
/// nothing new starts — no vend, no coin, no payout — while what is in flight finishes.
@Suite struct DrainTests {
    static func payouts(_ effects: [Effect]) -> [Effect] {
        effects.filter { if case .payOut = $0 { true } else { false } }
    }

    @Test func drainingRefusesSelectionsCoinReturnAndCoinsAndTurnsAcceptanceOff() {
        var rig = Rig(setup: Fixtures.setup(payoutPolicy: .change))
        rig.insert(1_000)
        rig.insert(1_000)
        #expect(rig.machine.acceptsCoins)
        let drained = rig.apply(.setDraining(true))
        #expect(drained.contains(.setCoinAcceptance(false)))
        #expect(!rig.machine.acceptsCoins)
        #expect(!rig.machine.acceptsBill(Fixtures.won(1_000)))
        #expect(rig.select("A1").rejections == [.draining])
        #expect(rig.machine.pendingVend == nil)
        #expect(rig.apply(.coinReturnPressed).rejections == [.draining])
        #expect(rig.machine.credit == Fixtures.won(2_000), "the credit stays")

        let resumed = rig.apply(.setDraining(false))
        #expect(resumed.contains(.setCoinAcceptance(true)))
        #expect(rig.select("A1").rejections.isEmpty)
    }

    @Test func aVendInFlightFinishesButItsChangeStaysCredit() throws {
        var rig = Rig(setup: Fixtures.setup(payoutPolicy: .change))
        rig.insert(1_000)
        rig.insert(1_000)
        rig.select("A1")
        let vend = try #require(rig.pendingVend)
        rig.apply(.setDraining(true))
        let ended = rig.apply(.vendEnded(vend, .dropped))
        #expect(ended.events.contains { if case .vendCompleted = $0 { true } else { false } })
        #expect(Self.payouts(ended).isEmpty, "no payout starts while draining")
        #expect(rig.machine.credit == Fixtures.won(800))
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func drainingIsNotSaved() throws {
        var rig = Rig()
        rig.apply(.setDraining(true))
        let restored = try JSON.roundTrip(rig.machine)
        #expect(!restored.isDraining)
        #expect(!(try JSON.text(rig.machine)).contains("raining"))
    }
}
