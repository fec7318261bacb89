import Testing
import VendingCore

@Suite struct VendTests {
    @Test func selectingWithEnoughCreditStartsAVendAndHoldsThePrice() throws {
        var rig = Rig()
        rig.insert(1_000)
        rig.insert(500)
        let effects = rig.select("A1")
        let vend = try #require(rig.pendingVend)
        #expect(
            effects == [
                .energiseRelay("A1", vend),
                .event(.creditChanged(from: Fixtures.won(1_500), to: Fixtures.won(300))),
                .event(.vendStarted(vend, slot: "A1", product: "milk", price: Fixtures.won(1_200))),
                .setBillLimit(Fixtures.won(9_700)),
            ])
        #expect(rig.machine.available(in: "A1") == 7)
        #expect(rig.machine.stock["A1"]?.count == 8)  // reserved, not yet removed
    }

    @Test func aDroppedItemCompletesTheSale() throws {
        var rig = Rig()
        rig.insert(1_500)
        rig.select("A2")
        let vend = try #require(rig.pendingVend)
        let effects = rig.apply(.vendEnded(vend, .dropped))
        let sale = Sale(vend: vend, slot: "A2", product: "cola", price: Fixtures.won(1_500), at: rig.now, confirmation: .dropSensor)
        #expect(
            effects.events == [
                .stockChanged(slot: "A2", product: "cola", from: 10, to: 9, reason: .sold),
                .vendCompleted(sale),
            ])
        #expect(rig.machine.pendingVend == nil)
        #expect(rig.machine.credit.isZero)
        #expect(rig.machine.ledger.history == [sale])
        #expect(rig.machine.ledger.sales == Fixtures.won(1_500))
    }

    @Test func aPulseWithoutSensorCountsAsSoldButSaysSo() throws {
        var rig = Rig()
        rig.insert(1_000)
        rig.select("B1")
        rig.apply(.vendEnded(try #require(rig.pendingVend), .pulsedWithoutSensor))
        #expect(rig.machine.ledger.history.map(\.confirmation) == [.relayOnly])
        #expect(rig.machine.credit == Fixtures.won(100))
    }

    @Test func noDropGivesTheCreditBackAndKeepsTheStock() throws {
        var rig = Rig()
        rig.insert(1_500)
        rig.select("A1")
        let vend = try #require(rig.pendingVend)
        let effects = rig.apply(.vendEnded(vend, .notDropped))
        #expect(
            effects.events == [
                .creditChanged(from: Fixtures.won(300), to: Fixtures.won(1_500)),
                .vendFailed(vend, slot: "A1", product: "milk", outcome: .notDropped, creditRestored: Fixtures.won(1_200)),
            ])
        #expect(rig.machine.stock["A1"]?.count == 8)
        #expect(rig.machine.ledger.failedVends == 1)
        #expect(rig.machine.ledger.history.isEmpty)
    }

    @Test func noDropCanBePaidOutWhenConfigured() throws {
        var rig = Rig(setup: Fixtures.setup(failedVendPolicy: .payOut))
        rig.insert(1_200)
        rig.select("A1")
        let effects = rig.apply(.vendEnded(try #require(rig.pendingVend), .notDropped))
        #expect(effects.contains(.payOut(PayoutID(rawValue: 1), Fixtures.won(1_200))))
        #expect(rig.machine.credit.isZero)
        #expect(rig.machine.ledger.refunds == Fixtures.won(1_200))
    }

    @Test func anUnknownOutcomeFollowsThePolicyAndIsRecorded() throws {
        var refund = Rig(setup: Fixtures.setup(unknownOutcomePolicy: .refundCredit))
        refund.insert(1_200)
        refund.select("A1")
        let refunded = refund.apply(.vendEnded(try #require(refund.pendingVend), .unknown))
        #expect(refunded.events.contains { if case .vendFailed(_, _, _, .unknown, _) = $0 { true } else { false } })
        #expect(refund.machine.credit == Fixtures.won(1_200))
        #expect(refund.machine.ledger.unknownOutcomes == 1)

        var assume = Rig(setup: Fixtures.setup(unknownOutcomePolicy: .assumeDispensed))
        assume.insert(1_200)
        assume.select("A1")
        assume.apply(.vendEnded(try #require(assume.pendingVend), .unknown))
        #expect(assume.machine.credit.isZero)
        #expect(assume.machine.ledger.history.map(\.confirmation) == [.assumed])
        #expect(assume.machine.ledger.unknownOutcomes == 1)
        #expect(assume.machine.stock["A1"]?.count == 7)
    }

    @Test func aVendWithoutOutcomeTimesOutOnTick() throws {
        var rig = Rig()
        rig.insert(1_200)
        rig.select("A1")
        rig.advance(seconds: 29)
        #expect(rig.apply(.tick).isEmpty)
        #expect(rig.machine.pendingVend != nil)
        rig.advance(seconds: 1)
        let effects = rig.apply(.tick)
        #expect(rig.machine.pendingVend == nil)
        #expect(effects.events.contains(.creditChanged(from: Fixtures.won(0), to: Fixtures.won(1_200))))
        #expect(rig.machine.ledger.unknownOutcomes == 1)
    }

    @Test func aLateOrRepeatedOutcomeChangesNothing() throws {
        var rig = Rig()
        rig.insert(1_200)
        rig.select("A1")
        let vend = try #require(rig.pendingVend)
        rig.apply(.vendEnded(vend, .dropped))
        let before = rig.machine
        #expect(rig.apply(.vendEnded(vend, .notDropped)).rejections == [.staleVendOutcome(vend)])
        #expect(rig.machine == before)
    }

    @Test func onlyOneVendIsInFlight() throws {
        var rig = Rig()
        rig.insert(5_000)
        rig.select("A1")
        let first = try #require(rig.pendingVend)
        #expect(rig.select("A2").rejections == [.vendInProgress(first)])
        #expect(rig.machine.credit == Fixtures.won(3_800))
    }

    @Test(arguments: [
        ("Z9", Rejection.unknownSlot("Z9")),
        ("A1", .insufficientCredit("A1", price: Fixtures.won(1_200), credit: Fixtures.won(1_000))),
    ])
    func selectionsThatCannotVendAreRejectedWithTheReason(slot: String, reason: Rejection) {
        var rig = Rig()
        rig.insert(1_000)
        let before = rig.machine
        let effects = rig.select(SlotID(slot))
        #expect(effects == [.event(.rejected(reason))])
        #expect(rig.machine == before)
    }

    @Test func anEmptySlotIsOutOfStock() {
        var rig = Rig(setup: Fixtures.setup(), stocked: false)
        rig.insert(5_000)
        #expect(rig.select("A1").rejections == [.outOfStock("A1")])
    }

    @Test func selectionsAreRefusedInServiceMode() {
        var rig = Rig()
        rig.insert(5_000)
        rig.apply(.setServiceMode(true))
        #expect(rig.select("A1").rejections == [.inServiceMode])
    }

    @Test func vendNumbersNeverRepeat() throws {
        var rig = Rig()
        var seen: [VendID] = []
        for _ in 0..<3 {
            rig.insert(1_200)
            rig.select("A1")
            let vend = try #require(rig.pendingVend)
            seen.append(vend)
            rig.apply(.vendEnded(vend, .notDropped))
            rig.apply(.coinReturnPressed)
        }
        #expect(Set(seen).count == 3)
        #expect(seen == seen.sorted())
    }
}
