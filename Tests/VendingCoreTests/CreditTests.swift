import Testing
import VendingCore

@Suite struct CreditTests {
    @Test func aCoinIsCreditedAndReported() {
        var rig = Rig()
        let effects = rig.insert(500)
        #expect(rig.machine.credit == Fixtures.won(500))
        #expect(
            effects.events == [
                .coinCredited(value: Fixtures.won(500), event: CoinEventID(source: "test", sequence: 1)),
                .creditChanged(from: Fixtures.won(0), to: Fixtures.won(500)),
            ])
        #expect(rig.machine.lastCoinSequence(from: "test") == 1)
    }

    @Test func theSameCoinEventIsNeverCreditedTwice() {
        var rig = Rig()
        let event = CoinEventID(source: "cctalk:123", sequence: 7)
        rig.apply(.coinInserted(value: Fixtures.won(500), event: event))
        let again = rig.apply(.coinInserted(value: Fixtures.won(500), event: event))
        let older = rig.apply(.coinInserted(value: Fixtures.won(100), event: CoinEventID(source: "cctalk:123", sequence: 6)))
        #expect(again.events == [.duplicateCoinIgnored(event)])
        #expect(older.events == [.duplicateCoinIgnored(CoinEventID(source: "cctalk:123", sequence: 6))])
        #expect(rig.machine.credit == Fixtures.won(500))
        #expect(rig.machine.ledger.coinsIn == Fixtures.won(500))
    }

    @Test func sourcesCountTheirEventsIndependently() {
        var rig = Rig()
        rig.apply(.coinInserted(value: Fixtures.won(100), event: CoinEventID(source: "a", sequence: 5)))
        rig.apply(.coinInserted(value: Fixtures.won(100), event: CoinEventID(source: "b", sequence: 1)))
        #expect(rig.machine.credit == Fixtures.won(200))
        #expect(rig.machine.lastCoinSequence(from: "a") == 5)
        #expect(rig.machine.lastCoinSequence(from: "b") == 1)
        #expect(rig.machine.lastCoinSequence(from: "c") == nil)
    }

    @Test func aCoinIsCreditedEvenAboveTheMaximumOrInServiceMode() {
        var rig = Rig(setup: Fixtures.setup(maximumCredit: 1_000))
        rig.insert(1_000)
        rig.insert(500)  // raced the inhibit: it is in the cash box, so it is credit
        rig.apply(.setServiceMode(true))
        rig.insert(100)
        #expect(rig.machine.credit == Fixtures.won(1_600))
    }

    @Test func aCoinInAnotherCurrencyIsRefused() {
        var rig = Rig()
        let effects = rig.apply(
            .coinInserted(
                value: Money(minorUnits: 100, currency: Fixtures.euro),
                event: CoinEventID(source: "x", sequence: 1)))
        #expect(effects.rejections == [.wrongCurrency(Money(minorUnits: 100, currency: Fixtures.euro))])
        #expect(rig.machine.credit.isZero)
        #expect(rig.machine.lastCoinSequence(from: "x") == nil)
    }

    @Test func coinReturnPaysOutTheWholeCredit() {
        var rig = Rig()
        rig.insert(500)
        rig.insert(100)
        let effects = rig.apply(.coinReturnPressed)
        #expect(effects.contains(.payOut(PayoutID(rawValue: 1), Fixtures.won(600))))
        #expect(effects.events.contains(.paidOut(Fixtures.won(600))))
        #expect(rig.machine.credit.isZero)
        #expect(rig.machine.ledger.refunds == Fixtures.won(600))
    }

    @Test func coinReturnWithoutCreditOrPayoutDeviceIsRefused() {
        var rig = Rig()
        #expect(rig.apply(.coinReturnPressed).rejections == [.nothingToPayOut])
        var noPayout = Rig(setup: Fixtures.setup(payoutPolicy: .none))
        noPayout.insert(500)
        let effects = noPayout.apply(.coinReturnPressed)
        #expect(effects.rejections == [.payoutUnavailable(credit: Fixtures.won(500))])
        #expect(!effects.contains { if case .payOut = $0 { true } else { false } })
        #expect(noPayout.machine.credit == Fixtures.won(500))
    }
}

@Suite struct CoinAcceptanceTests {
    @Test func inhibitedAtTheMaximumCreditAndEnabledAgainBelowIt() {
        var rig = Rig(setup: Fixtures.setup(maximumCredit: 1_500))
        #expect(rig.machine.acceptsCoins)
        #expect(!rig.insert(1_000).contains(.setCoinAcceptance(false)))
        let atMaximum = rig.insert(500)
        #expect(atMaximum.contains(.setCoinAcceptance(false)))
        #expect(atMaximum.events.contains(.coinAcceptanceChanged(false)))
        let afterPurchase = rig.select("A2")
        #expect(afterPurchase.contains(.setCoinAcceptance(true)))
    }

    @Test func inhibitedInServiceMode() {
        var rig = Rig()
        #expect(rig.apply(.setServiceMode(true)).contains(.setCoinAcceptance(false)))
        #expect(!rig.machine.acceptsCoins)
        #expect(rig.apply(.setServiceMode(false)).contains(.setCoinAcceptance(true)))
    }

    @Test func inhibitedWhenNothingIsLeftToSell() {
        var rig = Rig(setup: Fixtures.setup(), stocked: false)
        #expect(!rig.machine.acceptsCoins)
        let restocked = rig.apply(.restock("A1", count: 1, loadedAt: nil))
        #expect(restocked.contains(.setCoinAcceptance(true)))
        rig.insert(1_200)
        let reserved = rig.select("A1")  // the last item is reserved by the vend in flight
        #expect(reserved.contains(.setCoinAcceptance(false)))
    }

    @Test func noCommandWhenNothingChanges() {
        var rig = Rig()
        #expect(!rig.insert(100).contains { if case .setCoinAcceptance = $0 { true } else { false } })
    }
}
