import Foundation
import Testing
import VendingCore

/// Payout policy `change`: change after a sale, coin return and refunds through payout devices,
/// two-phase like a vend.
@Suite struct PayoutTests {
    static func changeRig(failedVendPolicy: FailedVendPolicy = .keepCredit) -> Rig {
        Rig(setup: Fixtures.setup(failedVendPolicy: failedVendPolicy, payoutPolicy: .change))
    }

    static func payouts(_ effects: [Effect]) -> [Effect] {
        effects.filter { if case .payOut = $0 { true } else { false } }
    }

    /// Buys A1 (1 200) with 2 000 and lets it drop: 800 of change is owed.
    static func buyWithChange(_ rig: inout Rig) throws -> [Effect] {
        rig.insert(1_000)
        rig.insert(1_000)
        rig.select("A1")
        return rig.apply(.vendEnded(try #require(rig.pendingVend), .dropped))
    }

    @Test func changeAfterASaleIsHeldUntilTheDevicesReport() throws {
        var rig = Self.changeRig()
        let effects = try Self.buyWithChange(&rig)
        let payout = PayoutID(rawValue: 1)
        #expect(Self.payouts(effects) == [.payOut(payout, Fixtures.won(800))])
        #expect(effects.events.contains(.payoutStarted(payout, amount: Fixtures.won(800), reason: .change)))
        #expect(rig.machine.credit.isZero)
        #expect(rig.machine.pendingPayout?.amount == Fixtures.won(800))
        #expect(rig.machine.ledger.changePaid.isZero)
        #expect(!rig.machine.acceptsCoins)
        #expect(rig.machine.integrityProblems.isEmpty)

        let ended = rig.apply(.payoutEnded(payout, paid: Fixtures.won(800), unknown: Fixtures.won(0), counters: ["hopper": 7]))
        #expect(
            ended.events.contains(
                .payoutEnded(
                    payout, paid: Fixtures.won(800), returnedToCredit: Fixtures.won(0),
                    unknown: Fixtures.won(0))))
        #expect(rig.machine.pendingPayout == nil)
        #expect(rig.machine.ledger.changePaid == Fixtures.won(800))
        #expect(rig.machine.ledger.sales == Fixtures.won(1_200))
        #expect(rig.machine.payoutCounters == ["hopper": 7])
        #expect(rig.machine.acceptsCoins)
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func anExactPaymentOwesNoChange() throws {
        var rig = Self.changeRig()
        rig.insert(1_000)
        rig.insert(100)
        rig.insert(100)
        rig.select("A1")
        let effects = rig.apply(.vendEnded(try #require(rig.pendingVend), .dropped))
        #expect(Self.payouts(effects).isEmpty)
        #expect(rig.machine.pendingPayout == nil)
    }

    @Test func whatTheDevicesCouldNotPayGoesBackToCreditAndIsNeverPaidAgainByItself() throws {
        var rig = Self.changeRig()
        _ = try Self.buyWithChange(&rig)
        let payout = PayoutID(rawValue: 1)
        // The hoppers ran low: only 500 of the 800 came out.
        let ended = rig.apply(.payoutEnded(payout, paid: Fixtures.won(500), unknown: Fixtures.won(0), counters: [:]))
        #expect(
            ended.events.contains(
                .payoutEnded(
                    payout, paid: Fixtures.won(500), returnedToCredit: Fixtures.won(300),
                    unknown: Fixtures.won(0))))
        #expect(Self.payouts(ended).isEmpty)
        #expect(rig.machine.credit == Fixtures.won(300))
        #expect(rig.machine.ledger.changePaid == Fixtures.won(500))
        #expect(rig.machine.integrityProblems.isEmpty)

        // A repeated report changes nothing: the payout is over.
        let again = rig.apply(.payoutEnded(payout, paid: Fixtures.won(500), unknown: Fixtures.won(0), counters: [:]))
        #expect(again.rejections == [.stalePayoutReport(payout)])
        #expect(rig.machine.credit == Fixtures.won(300))

        // The customer asks for the rest: a new payout, a refund.
        let returned = rig.apply(.coinReturnPressed)
        #expect(Self.payouts(returned) == [.payOut(PayoutID(rawValue: 2), Fixtures.won(300))])
        rig.apply(.payoutEnded(PayoutID(rawValue: 2), paid: Fixtures.won(300), unknown: Fixtures.won(0), counters: [:]))
        #expect(rig.machine.ledger.refunds == Fixtures.won(300))
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func theDevicesAskedAreRecordedBeforeTheyAreTold() throws {
        var rig = Self.changeRig()
        _ = try Self.buyWithChange(&rig)
        rig.apply(.payoutDeviceAsked(PayoutID(rawValue: 1), device: "hopper-500"))
        rig.apply(.payoutDeviceAsked(PayoutID(rawValue: 1), device: "hopper-100"))
        #expect(rig.machine.pendingPayout?.askedDevices == ["hopper-500", "hopper-100"])
        #expect(
            rig.apply(.payoutDeviceAsked(PayoutID(rawValue: 9), device: "hopper-100")).rejections
                == [.stalePayoutReport(PayoutID(rawValue: 9))])
    }

    @Test func whatADeviceHeldWhenAskedIsKeptAndALaterReportReplacesIt() throws {
        var rig = Self.changeRig()
        _ = try Self.buyWithChange(&rig)
        let payout = PayoutID(rawValue: 1)
        let tubes = [ChangeStock(value: Fixtures.won(100), count: 20), ChangeStock(value: Fixtures.won(500), count: nil)]
        rig.apply(.payoutDeviceAsked(payout, device: "changer", holding: tubes))
        #expect(rig.machine.pendingPayout?.askedDevices == ["changer"])
        #expect(rig.machine.pendingPayout?.holdings == ["changer": tubes])
        // A coin went into a tube while paying: the changer says what it holds apart from paying.
        let revised = [ChangeStock(value: Fixtures.won(100), count: 21), ChangeStock(value: Fixtures.won(500), count: nil)]
        rig.apply(.payoutDeviceAsked(payout, device: "changer", holding: revised))
        #expect(rig.machine.pendingPayout?.askedDevices == ["changer"])
        #expect(rig.machine.pendingPayout?.holdings == ["changer": revised])
        // A device that says nothing keeps what it said.
        rig.apply(.payoutDeviceAsked(payout, device: "changer"))
        #expect(rig.machine.pendingPayout?.holdings == ["changer": revised])
        let copy = try JSON.roundTrip(MachineSnapshot(rig.machine)).machine
        #expect(copy == rig.machine)
    }

    /// A journal written before devices said what they held still reads: the input has no
    /// holding, and a payout in flight in a snapshot has none.
    @Test func inputsAndPayoutsFromBeforeHoldingsStillDecode() throws {
        let old = #"{"payoutDeviceAsked":{"_0":1,"device":"mdb:/dev/ttyACM0:changer"}}"#
        let input = try JSONDecoder().decode(Input.self, from: Data(old.utf8))
        #expect(input == .payoutDeviceAsked(PayoutID(rawValue: 1), device: "mdb:/dev/ttyACM0:changer", holding: nil))
        let pending = #"{"id":1,"amount":"800 KRW","reason":"change","startedAt":0,"askedDevices":["hopper"]}"#
        let payout = try JSONDecoder().decode(PendingPayout.self, from: Data(pending.utf8))
        #expect(payout.askedDevices == ["hopper"] && payout.holdings.isEmpty)
    }

    @Test func anUnknownPartIsNeitherCreditNorPaidButKeptForTheTechnician() throws {
        var rig = Self.changeRig()
        _ = try Self.buyWithChange(&rig)
        rig.apply(.payoutEnded(PayoutID(rawValue: 1), paid: Fixtures.won(200), unknown: Fixtures.won(600), counters: [:]))
        #expect(rig.machine.credit.isZero)
        #expect(rig.machine.ledger.changePaid == Fixtures.won(200))
        #expect(rig.machine.ledger.unknownPayouts == Fixtures.won(600))
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func aReportOfMoreThanWasAskedIsCapped() throws {
        var rig = Self.changeRig()
        _ = try Self.buyWithChange(&rig)
        rig.apply(.payoutEnded(PayoutID(rawValue: 1), paid: Fixtures.won(5_000), unknown: Fixtures.won(100), counters: [:]))
        #expect(rig.machine.ledger.changePaid == Fixtures.won(800))
        #expect(rig.machine.ledger.unknownPayouts.isZero)
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func nothingElseMovesMoneyWhileAPayoutIsInFlight() throws {
        var rig = Self.changeRig()
        _ = try Self.buyWithChange(&rig)
        let payout = PayoutID(rawValue: 1)
        rig.insert(2_000)  // a coin already in the chute is still credited
        #expect(rig.select("B1").rejections == [.payoutInProgress(payout)])
        #expect(rig.apply(.coinReturnPressed).rejections == [.payoutInProgress(payout)])
        #expect(rig.apply(.reconfigure(Fixtures.setup(payoutPolicy: .manual))).rejections == [.payoutInProgress(payout)])
        // The same policy may be reloaded: the payout is resolved by the same devices.
        #expect(rig.apply(.reconfigure(Fixtures.setup(payoutPolicy: .change))).rejections.isEmpty)
        #expect(!rig.machine.acceptsBill(Fixtures.won(1_000)))
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func coinReturnAndFailedVendsArePaidByTheDevicesAsRefunds() throws {
        var rig = Self.changeRig(failedVendPolicy: .payOut)
        rig.insert(1_000)
        rig.insert(500)
        rig.select("A1")
        let failed = rig.apply(.vendEnded(try #require(rig.pendingVend), .notDropped))
        // 1 200 back from the failed vend, 300 stays as credit until coin return.
        #expect(Self.payouts(failed) == [.payOut(PayoutID(rawValue: 1), Fixtures.won(1_200))])
        #expect(rig.machine.credit == Fixtures.won(300))
        rig.apply(.payoutEnded(PayoutID(rawValue: 1), paid: Fixtures.won(1_200), unknown: Fixtures.won(0), counters: [:]))
        let returned = rig.apply(.coinReturnPressed)
        #expect(returned.events.contains(.payoutStarted(PayoutID(rawValue: 2), amount: Fixtures.won(300), reason: .coinReturn)))
        rig.apply(.payoutEnded(PayoutID(rawValue: 2), paid: Fixtures.won(300), unknown: Fixtures.won(0), counters: [:]))
        #expect(rig.machine.ledger.refunds == Fixtures.won(1_500))
        #expect(rig.machine.ledger.changePaid.isZero)
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func manualPayoutKeepsTodaysBehaviour() throws {
        var rig = Rig(setup: Fixtures.setup(payoutPolicy: .manual))
        rig.insert(2_000)
        rig.select("A1")
        let sold = rig.apply(.vendEnded(try #require(rig.pendingVend), .dropped))
        #expect(Self.payouts(sold).isEmpty)
        #expect(rig.machine.credit == Fixtures.won(800))
        let returned = rig.apply(.coinReturnPressed)
        #expect(returned.events.contains(.paidOut(Fixtures.won(800))))
        #expect(rig.machine.pendingPayout == nil)
        #expect(rig.machine.ledger.refunds == Fixtures.won(800))
    }
}

@Suite struct ExactChangeTests {
    static func stock(_ coins: [(Int64, Int?)]) -> Input {
        .changeInventory(coins.map { ChangeStock(value: Fixtures.won($0.0), count: $0.1) })
    }

    @Test func theMachineSaysWhenItCannotMakeChangeForItsCheapestProduct() {
        var rig = Rig(setup: Fixtures.setup(payoutPolicy: .change, maximumCredit: 2_000))
        // Nothing reported yet: nothing to pay change with.
        #expect(rig.machine.exactChangeOnly)
        // Enough 100s for every change up to 2 000 − 900.
        let plenty = rig.apply(Self.stock([(100, 11), (500, 2)]))
        #expect(plenty.events.contains(.exactChangeOnlyChanged(false)))
        #expect(!rig.machine.exactChangeOnly)
        // Three 100s and any number of 500s cannot pay 400.
        let low = rig.apply(Self.stock([(100, 3), (500, nil)]))
        #expect(low.events.contains(.exactChangeOnlyChanged(true)))
        #expect(rig.machine.exactChangeOnly)
        // A hopper that cannot count its 100s counts as full.
        rig.apply(Self.stock([(100, nil)]))
        #expect(!rig.machine.exactChangeOnly)
    }

    @Test func theCheapestAvailableProductDecides() {
        var rig = Rig(setup: Fixtures.setup(payoutPolicy: .change, maximumCredit: 1_500))
        // Cheapest is B1 at 900: every change up to 600 is payable (600 = 500 + 100).
        rig.apply(Self.stock([(100, 4), (500, 1)]))
        #expect(!rig.machine.exactChangeOnly)
        // Without B1, A1 at 1 200 is the cheapest: change up to 300.
        rig.apply(.unload("B1", count: nil))
        rig.apply(Self.stock([(100, 3)]))
        #expect(!rig.machine.exactChangeOnly)
        rig.apply(Self.stock([(100, 2)]))
        #expect(rig.machine.exactChangeOnly)
    }

    /// A band's lower cash price leaves more change to give: judged from the prices in force,
    /// with no input but the second's tick at the band's edges.
    @Test func aTimeBandsCashPricesDecide() throws {
        let setup = try MachineSetup(
            currency: Fixtures.won, catalog: Catalog([Fixtures.milk]),
            slots: [
                SlotSetup(
                    id: "A1", product: "milk", price: Fixtures.won(1_000), capacity: 8,
                    priceLines: [
                        PriceLine(list: 2, scope: .cash, price: Fixtures.won(700)),
                        // A card pays no change: its lower price does not count.
                        PriceLine(list: 1, scope: .cashless, price: Fixtures.won(500)),
                    ])
            ],
            maximumCredit: Fixtures.won(2_000), payoutPolicy: .change,
            pricing: PricingSetup(
                lists: [2: "happy hour"], bands: [PricingTests.happyHour], cardLists: [:], timeZone: PricingTests.seoul,
                roundingUnit: 100))
        var rig = Rig(setup: setup)
        rig.now = PricingTests.beforeBand
        // Every change up to 2 000 − 1 000 is payable: 100s to 500, then 500 + 100s.
        rig.apply(Self.stock([(100, 5), (500, 1)]))
        #expect(!rig.machine.exactChangeOnly)
        #expect(!rig.machine.needsExactChange(at: nil))
        // At 15:00, list 2's 700: change up to 1 300, beyond what the tubes hold.
        rig.now = PricingTests.inBand
        #expect(rig.apply(.tick).events.contains(.exactChangeOnlyChanged(true)))
        #expect(rig.machine.exactChangeOnly)
        // From 17:00, list 1 again.
        rig.now = PricingTests.inBand + .seconds(2 * 3_600)
        #expect(rig.apply(.tick).events.contains(.exactChangeOnlyChanged(false)))
        #expect(!rig.machine.exactChangeOnly)
    }

    @Test func theJudgementSurvivesARestart() throws {
        var rig = Rig(setup: Fixtures.setup(payoutPolicy: .change, maximumCredit: 2_000))
        rig.apply(Self.stock([(100, 11), (500, 2)]))
        let restored = try JSONDecoder().decode(Machine.self, from: JSONEncoder().encode(rig.machine))
        #expect(restored.exactChangeOnly == rig.machine.exactChangeOnly)
        #expect(restored == rig.machine)
    }

    @Test func onlyAMachineThatGivesChangeAsksForExactChange() {
        let rig = Rig(setup: Fixtures.setup(payoutPolicy: .manual))
        #expect(!rig.machine.exactChangeOnly)
    }
}

@Suite struct BillTests {
    static func bill(_ amount: Int64, _ sequence: UInt64) -> Input {
        .billStacked(value: Fixtures.won(amount), event: CoinEventID(source: "validator", sequence: sequence))
    }

    @Test func aStackedBillIsCreditedOnce() {
        var rig = Rig()
        let effects = rig.apply(Self.bill(5_000, 1))
        #expect(effects.events.contains(.billCredited(value: Fixtures.won(5_000), event: CoinEventID(source: "validator", sequence: 1))))
        #expect(rig.machine.credit == Fixtures.won(5_000))
        #expect(rig.apply(Self.bill(5_000, 1)).events == [.duplicateCoinIgnored(CoinEventID(source: "validator", sequence: 1))])
        #expect(rig.machine.credit == Fixtures.won(5_000))
        #expect(rig.machine.ledger.billsIn == Fixtures.won(5_000))
        #expect(rig.machine.ledger.coinsIn.isZero)
        #expect(rig.machine.ledger.stacker.map(\.count) == [1])
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func escrowStacksOnlyWhatTheMachineCanTake() {
        var rig = Rig(setup: Fixtures.setup(maximumCredit: 6_000))
        #expect(rig.machine.acceptsBill(Fixtures.won(5_000)))
        rig.insert(1_000)
        #expect(rig.machine.acceptsBill(Fixtures.won(5_000)))
        #expect(!rig.machine.acceptsBill(Fixtures.won(10_000)))
        rig.apply(.setServiceMode(true))
        #expect(!rig.machine.acceptsBill(Fixtures.won(1_000)))
        let empty = Rig(stocked: false)
        #expect(!empty.machine.acceptsBill(Fixtures.won(1_000)))
    }

    /// The validator decides its escrow from the limit the machine emits as it changes (as coin
    /// acceptance is emitted), never by asking the machine.
    @Test func theBillLimitIsEmittedAsItChanges() {
        var rig = Rig(setup: Fixtures.setup(maximumCredit: 6_000))
        #expect(rig.machine.billLimit == Fixtures.won(6_000))
        #expect(rig.insert(1_000).contains(.setBillLimit(Fixtures.won(5_000))))
        #expect(rig.apply(.setServiceMode(true)).contains(.setBillLimit(nil)))
        #expect(rig.apply(.setServiceMode(false)).contains(.setBillLimit(Fixtures.won(5_000))))
        #expect(!rig.apply(.setServiceMode(false)).contains { if case .setBillLimit = $0 { true } else { false } })
    }
}
