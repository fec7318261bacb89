import Testing
import VendingCore

/// Issue 35's technician findings that the core decides: a reload that lowers a capacity below
/// the stock, and one price rule for the file and for `vendctl price`.
@Suite struct LoweredCapacityTests {
    static func setup(capacityOfA1: Int) -> MachineSetup {
        Fixtures.setup(slots: [
            SlotSetup(id: "A1", product: "milk", price: Fixtures.won(1_200), capacity: capacityOfA1),
            SlotSetup(id: "A2", product: "cola", price: Fixtures.won(1_500), capacity: 10),
        ])
    }

    @Test func aReloadBelowTheStockSaysSoAndTheItemsStayAndSell() throws {
        var rig = Rig(setup: Self.setup(capacityOfA1: 8))
        let effects = rig.apply(.reconfigure(Self.setup(capacityOfA1: 4)))
        #expect(effects.events.contains(.capacityBelowStock(slot: "A1", stock: 8, capacity: 4)))
        #expect(!effects.events.contains { if case .capacityBelowStock(slot: "A2", _, _) = $0 { true } else { false } })
        #expect(rig.machine.stock["A1"]?.count == 8, "the items stay")
        // Restock and the stock agree: 8 items, above the capacity of 4, nothing to add.
        let refused = rig.apply(.restock("A1", count: nil, loadedAt: nil))
        #expect(refused.rejections == [.aboveCapacity("A1", stock: 8, capacity: 4)])
        #expect(
            Rejection.aboveCapacity("A1", stock: 8, capacity: 4).description
                == "slot A1 holds 8 items, above its capacity of 4: they stay and sell; restock adds nothing until it holds fewer than 4")
        #expect(rig.apply(.restock("A1", count: 1, loadedAt: nil)).rejections == [.aboveCapacity("A1", stock: 8, capacity: 4)])
        rig.insert(1_200)
        #expect(rig.select("A1").rejections.isEmpty, "they sell")
        rig.apply(.vendEnded(try #require(rig.pendingVend), .dropped))
        #expect(rig.machine.stock["A1"]?.count == 7)
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func aReloadThatLeavesRoomSaysNothing() {
        var rig = Rig(setup: Self.setup(capacityOfA1: 8), stocked: false)
        rig.apply(.restock("A1", count: 3, loadedAt: nil))
        let effects = rig.apply(.reconfigure(Self.setup(capacityOfA1: 4)))
        #expect(!effects.events.contains { if case .capacityBelowStock = $0 { true } else { false } })
        #expect(
            rig.apply(.restock("A1", count: nil, loadedAt: nil)).events.contains(
                .stockChanged(slot: "A1", product: "milk", from: 3, to: 4, reason: .restocked)))
    }
}

@Suite struct PriceRuleTests {
    @Test func aPriceAboveTheMaximumCreditIsRefusedAsTheFileRefusesIt() {
        var rig = Rig()
        let huge = Fixtures.won(99_999_999_999)
        #expect(rig.apply(.setPrice("A1", huge)).rejections == [.priceRefused("A1", huge, .aboveMaximumCredit(Fixtures.won(10_000)))])
        #expect(rig.machine.price(of: "A1") == Fixtures.won(1_200))
        let format = MoneyFormat(template: "{amount}원")!
        #expect(
            PriceProblem.aboveMaximumCredit(Fixtures.won(10_000)).describe(huge, format: format)
                == "99,999,999,999원 is above machine.maximum_credit (10,000원), so it could never be paid")
        #expect(rig.apply(.setPrice("A1", Fixtures.won(10_000))).rejections.isEmpty, "the maximum itself can be paid")
        #expect(PriceProblem.of(Fixtures.won(0), currency: Fixtures.won, maximumCredit: Fixtures.won(10_000)) == .notPositive)
    }
}
