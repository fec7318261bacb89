import Foundation
import Testing
import VendingCore

/// The technician's side of the change stock: fill mode (float, not credit), payout tests (from
/// the devices' stock, two-phase, not from credit), coin routes and manual dispenses in the books.
@Suite struct ChangeStockTests {
    static func serviceRig() -> Rig {
        var rig = PayoutTests.changeRig()
        _ = rig.apply(.setServiceMode(true))
        return rig
    }

    static func route(_ rig: inout Rig, _ amount: Int64, _ route: CoinRoute?) -> [Effect] {
        rig.coinSequence += 1
        return rig.apply(
            .coinInserted(
                value: Fixtures.won(amount), event: CoinEventID(source: "test", sequence: rig.coinSequence),
                route: route))
    }

    @Test func fillModeNeedsServiceModeAndPayoutDevices() {
        var selling = PayoutTests.changeRig()
        #expect(selling.apply(.setFillMode(true)).events == [.rejected(.notInServiceMode)])
        var noDevices = Rig(setup: Fixtures.setup(payoutPolicy: .none))
        _ = noDevices.apply(.setServiceMode(true))
        #expect(noDevices.apply(.setFillMode(true)).events == [.rejected(.noPayoutDevices)])
        #expect(!noDevices.machine.isFilling)
    }

    @Test func coinsInFillModeAreFloatNotCredit() {
        var rig = Self.serviceRig()
        #expect(!rig.machine.acceptsCoins)
        let on = rig.apply(.setFillMode(true))
        #expect(on.contains(.setCoinAcceptance(true)))
        #expect(on.events.contains(.fillModeChanged(true)))
        let effects = Self.route(&rig, 500, .tubes)
        #expect(effects.events == [.floatAdded(value: Fixtures.won(500), event: CoinEventID(source: "test", sequence: 1))])
        #expect(rig.machine.credit.isZero)
        #expect(rig.machine.ledger.floatFilled == Fixtures.won(500))
        #expect(rig.machine.ledger.coinsIn.isZero)
        #expect(!rig.machine.acceptsBill(Fixtures.won(1_000)))
        // A replayed event is still a duplicate, float or not.
        #expect(
            rig.apply(.coinInserted(value: Fixtures.won(500), event: CoinEventID(source: "test", sequence: 1)))
                .events == [.duplicateCoinIgnored(CoinEventID(source: "test", sequence: 1))])
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func leavingServiceModeEndsFillMode() {
        var rig = Self.serviceRig()
        _ = rig.apply(.setFillMode(true))
        let off = rig.apply(.setServiceMode(false))
        #expect(off.events.contains(.fillModeChanged(false)))
        #expect(!rig.machine.isFilling)
        _ = Self.route(&rig, 500, .tubes)
        #expect(rig.machine.credit == Fixtures.won(500))
        #expect(rig.machine.ledger.floatFilled.isZero)
    }

    @Test func aPayoutTestIsTwoPhaseAndTakesNoCredit() {
        var rig = Self.serviceRig()
        let started = rig.apply(.testPayout(Fixtures.won(700)))
        let payout = PayoutID(rawValue: 1)
        #expect(PayoutTests.payouts(started) == [.payOut(payout, Fixtures.won(700))])
        #expect(started.events.contains(.payoutStarted(payout, amount: Fixtures.won(700), reason: .test)))
        #expect(rig.machine.pendingPayout?.reason == .test)
        #expect(rig.machine.credit.isZero)
        #expect(rig.machine.integrityProblems.isEmpty)
        // Devices that ran short: the rest stays in them, it is nobody's credit.
        let ended = rig.apply(.payoutEnded(payout, paid: Fixtures.won(500), unknown: Fixtures.won(100), counters: [:]))
        #expect(ended.events == [.testPayoutEnded(payout, paid: Fixtures.won(500), unpaid: Fixtures.won(100), unknown: Fixtures.won(100))])
        #expect(rig.machine.credit.isZero)
        #expect(rig.machine.ledger.testPayouts == Fixtures.won(500))
        #expect(rig.machine.ledger.unknownTestPayouts == Fixtures.won(100))
        #expect(rig.machine.ledger.unknownPayouts.isZero)
        #expect(rig.machine.ledger.dispensed.isZero)
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func aPayoutTestIsRefusedOutsideServiceModeOrWhileAnotherIsPaying() {
        var selling = PayoutTests.changeRig()
        #expect(selling.apply(.testPayout(Fixtures.won(500))).events == [.rejected(.notInServiceMode)])
        var rig = Self.serviceRig()
        #expect(rig.apply(.testPayout(Fixtures.won(0))).events == [.rejected(.invalidAmount(Fixtures.won(0)))])
        _ = rig.apply(.testPayout(Fixtures.won(500)))
        #expect(rig.apply(.testPayout(Fixtures.won(500))).events == [.rejected(.payoutInProgress(PayoutID(rawValue: 1)))])
        // Fill mode may start, but no coin is taken while the devices pay.
        _ = rig.apply(.setFillMode(true))
        #expect(rig.machine.isFilling)
        #expect(!rig.machine.acceptsCoins)
    }

    @Test func routesAndDevicePayoutsAreInTheBooks() throws {
        var rig = PayoutTests.changeRig()
        _ = Self.route(&rig, 1_000, .tubes)
        _ = Self.route(&rig, 1_000, .cashBox)
        rig.select("A1")
        _ = rig.apply(.vendEnded(try #require(rig.pendingVend), .dropped))
        _ = rig.apply(.payoutEnded(PayoutID(rawValue: 1), paid: Fixtures.won(800), unknown: Fixtures.won(0), counters: [:]))
        _ = rig.apply(.coinsDispensedManually(Fixtures.won(300)))
        let ledger = rig.machine.ledger
        #expect(ledger.coinsIn == Fixtures.won(2_000))
        #expect(ledger.coinsToTubes == Fixtures.won(1_000))
        #expect(ledger.dispensed == Fixtures.won(800))
        #expect(ledger.manuallyDispensed == Fixtures.won(300))
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    /// Inputs journaled before coin routes were kept carry no `route`: they read as the cash box.
    @Test func aJournaledCoinWithoutARouteStillDecodes() throws {
        let event = CoinEventID(source: "cctalk", sequence: 3)
        let new = try JSONEncoder().encode(Input.coinInserted(value: Fixtures.won(500), event: event, route: .tubes))
        var object = try #require(try JSONSerialization.jsonObject(with: new) as? [String: [String: Any]])
        #expect(object["coinInserted"]?["route"] as? String == "tubes")
        object["coinInserted"]?["route"] = nil
        let old = try JSONSerialization.data(withJSONObject: object)
        #expect(try JSONDecoder().decode(Input.self, from: old) == .coinInserted(value: Fixtures.won(500), event: event, route: nil))
        var rig = PayoutTests.changeRig()
        _ = rig.apply(try JSONDecoder().decode(Input.self, from: old))
        #expect(rig.machine.ledger.coinsToTubes.isZero)
        #expect(rig.machine.ledger.coinsIn == Fixtures.won(500))
    }
}
