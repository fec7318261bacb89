import Testing
import VendingCore

@Suite struct RestockTests {
    @Test func fillsToCapacityOrAddsACount() {
        var rig = Rig(setup: Fixtures.setup(), stocked: false)
        let filled = rig.apply(.restock("A1", count: nil, loadedAt: nil))
        #expect(filled.events.contains(.stockChanged(slot: "A1", product: "milk", from: 0, to: 8, reason: .restocked)))
        rig.apply(.restock("A2", count: 4, loadedAt: nil))
        #expect(rig.machine.stock["A2"]?.count == 4)
    }

    @Test func refusesMoreThanFitsOrNonsenseCounts() {
        var rig = Rig(setup: Fixtures.setup(), stocked: false)
        rig.apply(.restock("A1", count: 6, loadedAt: nil))
        #expect(rig.apply(.restock("A1", count: 3, loadedAt: nil)).rejections == [.overCapacity("A1", capacity: 8, free: 2)])
        #expect(rig.apply(.restock("A1", count: 0, loadedAt: nil)).rejections == [.invalidCount(0)])
        #expect(rig.apply(.restock("A1", count: -2, loadedAt: nil)).rejections == [.invalidCount(-2)])
        #expect(rig.apply(.restock("Q1", count: 1, loadedAt: nil)).rejections == [.unknownSlot("Q1")])
        rig.apply(.restock("A1", count: nil, loadedAt: nil))
        #expect(rig.apply(.restock("A1", count: nil, loadedAt: nil)).rejections == [.overCapacity("A1", capacity: 8, free: 0)])
        #expect(rig.machine.stock["A1"]?.count == 8)
    }

    @Test func sellsOldestFirstAndTracksLoadDates() throws {
        var rig = Rig(setup: Fixtures.setup(), stocked: false)
        let monday = rig.now
        rig.apply(.restock("A1", count: 2, loadedAt: monday))
        rig.advance(days: 2)
        rig.apply(.restock("A1", count: 3, loadedAt: nil))
        rig.insert(1_200)
        rig.select("A1")
        rig.apply(.vendEnded(try #require(rig.pendingVend), .dropped))
        #expect(rig.machine.stock["A1"]?.lots.map(\.count) == [1, 3])
        #expect(rig.machine.stock["A1"]?.lots.first?.loadedAt == monday)
    }

    @Test func unloadTakesTheOldestAndNeverTheReservedItem() throws {
        var rig = Rig(setup: Fixtures.setup(), stocked: false)
        rig.apply(.restock("A1", count: 2, loadedAt: nil))
        rig.advance(days: 1)
        rig.apply(.restock("A1", count: 2, loadedAt: nil))
        let removed = rig.apply(.unload("A1", count: 3))
        #expect(removed.events == [.stockChanged(slot: "A1", product: "milk", from: 4, to: 1, reason: .unloaded)])
        #expect(rig.machine.stock["A1"]?.lots.map(\.loadedAt) == [rig.now])
        rig.insert(1_200)
        rig.select("A1")
        #expect(rig.apply(.unload("A1", count: nil)).rejections == [.invalidCount(0)])
        #expect(rig.apply(.unload("A1", count: 1)).rejections == [.invalidCount(1)])
    }
}

@Suite struct PriceTests {
    @Test func aSetPriceAppliesToTheNextSaleAndCanBeCleared() {
        var rig = Rig()
        let changed = rig.apply(.setPrice("A1", Fixtures.won(1_000)))
        #expect(changed.events == [.priceChanged(slot: "A1", from: Fixtures.won(1_200), to: Fixtures.won(1_000))])
        rig.insert(1_000)
        #expect(rig.machine.purchasable.map(\.slot) == ["A1", "B1"])
        rig.apply(.setPrice("A1", nil))
        #expect(rig.machine.price(of: "A1") == Fixtures.won(1_200))
        #expect(rig.machine.priceOverrides.isEmpty)
    }

    @Test func refusesNonsensePricesAndUnknownSlots() {
        var rig = Rig()
        #expect(rig.apply(.setPrice("A1", Fixtures.won(0))).rejections == [.invalidPrice(Fixtures.won(0))])
        let euros = Money(minorUnits: 100, currency: Fixtures.euro)
        #expect(rig.apply(.setPrice("A1", euros)).rejections == [.invalidPrice(euros)])
        #expect(rig.apply(.setPrice("Z1", Fixtures.won(100))).rejections == [.unknownSlot("Z1")])
    }

    @Test func aVendKeepsThePriceItStartedWith() throws {
        var rig = Rig()
        rig.insert(1_200)
        rig.select("A1")
        rig.apply(.setPrice("A1", Fixtures.won(2_000)))
        rig.apply(.vendEnded(try #require(rig.pendingVend), .dropped))
        #expect(rig.machine.ledger.history.map(\.price) == [Fixtures.won(1_200)])
    }
}

@Suite struct ReconfigureTests {
    func slots(_ a1Price: Int64 = 1_200, a1Product: ProductID = "milk", extra: Bool = false) -> [SlotSetup] {
        var slots = [
            SlotSetup(id: "A1", product: a1Product, price: Fixtures.won(a1Price), capacity: 8),
            SlotSetup(id: "A2", product: "cola", price: Fixtures.won(1_500), capacity: 10),
        ]
        if extra { slots.append(SlotSetup(id: "C1", product: "coffee", price: Fixtures.won(800), capacity: 4)) }
        return slots
    }

    @Test func keepsCreditStockAndOverridesWhenTheFileDidNotTouchThem() {
        var rig = Rig(setup: Fixtures.setup(slots: slots()))
        rig.insert(700)
        rig.apply(.setPrice("A1", Fixtures.won(1_000)))
        let effects = rig.apply(.reconfigure(Fixtures.setup(slots: slots(extra: true))))
        #expect(effects.events == [.setupChanged(addedSlots: ["C1"], removedSlots: [])])
        #expect(rig.machine.credit == Fixtures.won(700))
        #expect(rig.machine.stock["A1"]?.count == 8)
        #expect(rig.machine.stock["C1"]?.count == 0)
        #expect(rig.machine.price(of: "A1") == Fixtures.won(1_000))
    }

    @Test func aPriceEditedInTheFileWinsOverAnOlderOverride() {
        var rig = Rig(setup: Fixtures.setup(slots: slots()))
        rig.apply(.setPrice("A1", Fixtures.won(1_000)))
        let effects = rig.apply(.reconfigure(Fixtures.setup(slots: slots(1_300))))
        #expect(effects.events.contains(.priceChanged(slot: "A1", from: Fixtures.won(1_000), to: Fixtures.won(1_300))))
        #expect(rig.machine.price(of: "A1") == Fixtures.won(1_300))
    }

    @Test func aSlotWithAnotherProductOrRemovedLosesItsCountedStock() {
        var rig = Rig(setup: Fixtures.setup(slots: slots()))
        let effects = rig.apply(
            .reconfigure(
                Fixtures.setup(slots: [
                    SlotSetup(id: "A1", product: "coffee", price: Fixtures.won(900), capacity: 8)
                ])))
        #expect(
            effects.events == [
                .stockChanged(slot: "A1", product: "milk", from: 8, to: 0, reason: .slotReconfigured),
                .stockChanged(slot: "A2", product: "cola", from: 10, to: 0, reason: .slotReconfigured),
                .setupChanged(addedSlots: [], removedSlots: ["A2"]),
                .coinAcceptanceChanged(false),  // nothing left to sell
            ])
        #expect(rig.machine.stock["A1"]?.count == 0)
        #expect(rig.machine.stock["A2"] == nil)
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func waitsForAVendInFlight() throws {
        var rig = Rig()
        rig.insert(1_200)
        rig.select("A1")
        let vend = try #require(rig.pendingVend)
        #expect(rig.apply(.reconfigure(Fixtures.setup(slots: slots()))).rejections == [.vendInProgress(vend)])
    }

    @Test func refusesToSwitchCurrencyWithMoneyOnTheBooks() throws {
        var rig = Rig()
        let euroSetup = try MachineSetup(
            currency: Fixtures.euro, catalog: Catalog([Fixtures.milk]),
            slots: [SlotSetup(id: "A1", product: "milk", price: Money(minorUnits: 150, currency: Fixtures.euro), capacity: 5)],
            maximumCredit: Money(minorUnits: 1_000, currency: Fixtures.euro))
        var fresh = Rig(stocked: false)
        fresh.apply(.reconfigure(euroSetup))
        #expect(fresh.machine.setup.currency == Fixtures.euro)
        rig.insert(100)
        #expect(rig.apply(.reconfigure(euroSetup)).rejections == [.currencyChange(from: Fixtures.won, to: Fixtures.euro)])
        #expect(rig.machine.setup.currency == Fixtures.won)
    }
}

@Suite struct ServiceModeTests {
    @Test func togglesAndReportsOnlyRealChanges() {
        var rig = Rig()
        #expect(rig.apply(.setServiceMode(true)).events.contains(.serviceModeChanged(true)))
        #expect(rig.apply(.setServiceMode(true)).isEmpty)
        #expect(rig.machine.isInServiceMode)
    }
}

@Suite struct SetupValidationTests {
    @Test func theCoreRefusesAnInconsistentSetup() {
        let slot = SlotSetup(id: "A1", product: "milk", price: Fixtures.won(100), capacity: 1)
        func make(_ slots: [SlotSetup], payout: Bool = true, policy: FailedVendPolicy = .keepCredit) throws(SetupError) {
            _ = try MachineSetup(
                currency: Fixtures.won, catalog: Catalog([Fixtures.milk]), slots: slots,
                maximumCredit: Fixtures.won(1_000), failedVendPolicy: policy, payoutPolicy: payout ? .manual : .none)
        }
        #expect(throws: SetupError.duplicateSlot("A1")) { try make([slot, slot]) }
        #expect(throws: SetupError.unknownProduct("A1", "tea")) {
            try make([SlotSetup(id: "A1", product: "tea", price: Fixtures.won(100), capacity: 1)])
        }
        #expect(throws: SetupError.invalidPrice("A1")) {
            try make([SlotSetup(id: "A1", product: "milk", price: Fixtures.won(0), capacity: 1)])
        }
        #expect(throws: SetupError.invalidCapacity("A1")) {
            try make([SlotSetup(id: "A1", product: "milk", price: Fixtures.won(10), capacity: 0)])
        }
        #expect(throws: SetupError.payOutWithoutPayoutDevice) { try make([slot], payout: false, policy: .payOut) }
    }
}
