import Testing
import VendingCore

@Suite struct QueryTests {
    @Test func purchasableFollowsCreditAndStock() {
        var rig = Rig()
        #expect(rig.machine.purchasable.isEmpty)
        rig.insert(1_000)
        #expect(rig.machine.purchasable.map(\.slot) == ["B1"])
        rig.insert(500)
        #expect(rig.machine.purchasable.map(\.slot) == ["A1", "A2", "B1"])
        rig.apply(.unload("A2", count: nil))
        #expect(rig.machine.purchasable.map(\.slot) == ["A1", "B1"])
    }

    @Test func stockByProductSumsSlotsAndExcludesTheReservedItem() {
        let setup = Fixtures.setup(slots: [
            SlotSetup(id: "A1", product: "cola", price: Fixtures.won(1_500), capacity: 5),
            SlotSetup(id: "A2", product: "cola", price: Fixtures.won(1_500), capacity: 5),
            SlotSetup(id: "B1", product: "milk", price: Fixtures.won(1_200), capacity: 5),
        ])
        var rig = Rig(setup: setup, stocked: false)
        rig.apply(.restock("A1", count: 3, loadedAt: nil))
        rig.apply(.restock("A2", count: 2, loadedAt: nil))
        #expect(rig.machine.stockByProduct == ["cola": 5, "milk": 0])
        rig.insert(1_500)
        rig.select("A1")
        #expect(rig.machine.stockByProduct == ["cola": 4, "milk": 0])
    }

    @Test func expiredStockIsCountedFromEachLotsLoadDate() {
        var rig = Rig(setup: Fixtures.setup(), stocked: false)
        let loaded = rig.now
        rig.apply(.restock("A1", count: 3, loadedAt: loaded))  // milk keeps 10 days
        rig.apply(.restock("A1", count: 2, loadedAt: loaded.adding(days: 5)))
        rig.apply(.restock("B1", count: 4, loadedAt: loaded))  // coffee keeps 90 days
        #expect(rig.machine.expiredStock(at: loaded.adding(days: 9)).isEmpty)
        let tenDays = loaded.adding(days: 10)
        #expect(rig.machine.expiredStock(at: tenDays) == [ExpiredStock(slot: "A1", product: "milk", count: 3, since: tenDays)])
        #expect(rig.machine.expiredStock(at: loaded.adding(days: 15)).map(\.count) == [5])
        #expect(rig.machine.earliestExpiry(in: "B1") == loaded.adding(days: 90))
        #expect(rig.machine.earliestExpiry(in: "A2") == nil)
    }

    @Test func hotProductsAreTheHotOnesOnSale() {
        let rig = Rig()
        #expect(rig.machine.hotProducts.map(\.id) == ["coffee"])
        let noCoffee = Rig(setup: Fixtures.setup(slots: [SlotSetup(id: "A1", product: "milk", price: Fixtures.won(1_200), capacity: 2)]))
        #expect(noCoffee.machine.hotProducts.isEmpty)
    }

    @Test func historySinceStartUpAndOverall() throws {
        var rig = Rig()
        try buy("A1", in: &rig)
        rig.advance(days: 1)
        let startUp = rig.now
        try buy("A2", in: &rig)
        try buy("B1", in: &rig)
        #expect(rig.machine.history().map(\.slot) == ["A1", "A2", "B1"])
        #expect(rig.machine.history(since: startUp).map(\.slot) == ["A2", "B1"])
    }

    @Test func historyKeepsTheNewestWithinItsLimitButTotalsKeepEverything() throws {
        var rig = Rig(setup: Fixtures.setup(historyLimit: 2))
        for slot: SlotID in ["A1", "A2", "B1", "B1"] { try buy(slot, in: &rig) }
        #expect(rig.machine.history().map(\.slot) == ["B1", "B1"])
        #expect(rig.machine.salesByProduct["coffee"]?.count == 2)
        #expect(rig.machine.salesByProduct["coffee"]?.amount == Fixtures.won(1_800))
        #expect(rig.machine.salesByProduct.values.reduce(0) { $0 + $1.count } == 4)
    }

    @Test func salesTotalsPerProductAndCashPerDenomination() throws {
        var rig = Rig()
        try buy("A2", in: &rig, paying: [1_000, 500])
        try buy("A2", in: &rig, paying: [500, 500, 500])
        try buy("B1", in: &rig, paying: [1_000])
        rig.apply(.coinReturnPressed)
        #expect(rig.machine.salesByProduct["cola"]?.count == 2)
        #expect(rig.machine.salesByProduct["cola"]?.amount == Fixtures.won(3_000))
        #expect(rig.machine.salesByProduct["coffee"]?.amount == Fixtures.won(900))
        #expect(rig.machine.salesByProduct["milk"] == nil)
        #expect(rig.machine.cashCounters.map { "\($0.value.minorUnits)x\($0.count)" } == ["500x4", "1000x2"])
        #expect(rig.machine.ledger.refunds == Fixtures.won(100))
    }

    @Test func salesTotalsSinceAMomentComeFromTheHistory() throws {
        var rig = Rig()
        try buy("A2", in: &rig)
        rig.advance(days: 1)
        let later = rig.now
        try buy("A2", in: &rig)
        try buy("B1", in: &rig)
        let all = rig.machine.salesTotals()
        #expect(all.byProduct["cola"]?.count == 2)
        #expect(all.total.count == 3)
        #expect(all.total.amount == rig.machine.ledger.sales)
        let recent = rig.machine.salesTotals(since: later)
        #expect(recent.byProduct["cola"]?.count == 1)
        #expect(recent.bySlot["B1"]?.amount == Fixtures.won(900))
        #expect(recent.total.count == 2)
        #expect(rig.machine.salesTotals(since: later.adding(days: 1)).total.count == 0)
    }

    @Test func theHistoryCoversAMomentOnlyIfNothingSinceWasDropped() throws {
        var rig = Rig(setup: Fixtures.setup(historyLimit: 2))
        let start = rig.now
        try buy("A1", in: &rig)
        #expect(rig.machine.historyCovers(since: start))
        for slot: SlotID in ["A2", "B1"] {
            rig.advance(days: 1)
            try buy(slot, in: &rig)
        }
        // The first sale was dropped: a report since the start would miss it.
        #expect(!rig.machine.historyCovers(since: start))
        #expect(rig.machine.historyCovers(since: rig.now))
    }

    @Test func theCategoryTreeGroupsProductsByPath() {
        let tree = Catalog([Fixtures.milk, Fixtures.cola, Fixtures.coffee]).categoryTree
        #expect(tree.children.map(\.name) == ["beverage"])
        let beverage = tree.children[0]
        #expect(beverage.children.map(\.name) == ["coffee", "milk", "soda"])
        #expect(beverage.children[0].children.map(\.path.description) == ["beverage / coffee / canned"])
        #expect(beverage.children[0].children[0].products == ["coffee"])
        #expect(beverage.children[2].children[0].products == ["cola"])
        #expect(Catalog([Fixtures.milk, Fixtures.cola, Fixtures.coffee]).products(under: CategoryPath(["beverage", "soda"])).map(\.id) == ["cola"])
    }
}

/// Buys from `slot` with coins, completing the vend.
func buy(_ slot: SlotID, in rig: inout Rig, paying coins: [Int64]? = nil) throws {
    let price = try #require(rig.machine.price(of: slot))
    for coin in coins ?? [price.minorUnits] { rig.insert(coin) }
    rig.select(slot)
    rig.apply(.vendEnded(try #require(rig.pendingVend), .dropped))
}
