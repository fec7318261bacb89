import Testing
import VendingCore

/// The seed app's walk-through: add three products, insert money, list what can be bought, buy
/// one, read the history.
@Suite struct SeedScenarioTests {
    @Test func addProductsInsertMoneyListBuyAndReadHistory() throws {
        let setup = Fixtures.setup(slots: [
            SlotSetup(id: "A1", product: "milk", price: Fixtures.won(1_200), capacity: 5),
            SlotSetup(id: "A2", product: "cola", price: Fixtures.won(1_500), capacity: 5),
            SlotSetup(id: "A3", product: "coffee", price: Fixtures.won(900), capacity: 5),
        ])
        var rig = Rig(setup: setup, stocked: false)
        for slot: SlotID in ["A1", "A2", "A3"] { rig.apply(.restock(slot, count: 3, loadedAt: nil)) }
        #expect(rig.machine.stockByProduct == ["milk": 3, "cola": 3, "coffee": 3])

        rig.insert(1_000)
        rig.insert(100)
        rig.insert(100)
        #expect(rig.machine.credit == Fixtures.won(1_200))
        #expect(rig.machine.purchasable.map(\.product.name) == ["Banana Milk", "Canned Coffee"])

        rig.select("A1")
        let vend = try #require(rig.pendingVend)
        rig.apply(.vendEnded(vend, .dropped))
        #expect(rig.machine.credit.isZero)
        #expect(rig.machine.stockByProduct["milk"] == 2)
        let history = rig.machine.history()
        #expect(history.count == 1)
        #expect(history.first?.product == "milk")
        #expect(history.first?.price == Fixtures.won(1_200))
        #expect(rig.machine.hotProducts.map(\.name) == ["Canned Coffee"])
        let format = try #require(MoneyFormat(template: "{amount}원"))
        #expect(format.string(for: rig.machine.ledger.sales) == "1,200원")
    }
}
