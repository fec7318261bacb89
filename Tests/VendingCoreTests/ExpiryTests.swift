import Testing
import VendingCore

/// Items past their shelf life: milk (10 days) in A1, perishable in the chilled zone; cola (180
/// days) in A2, not perishable; coffee (90 days) in B1.
@Suite struct ExpiryTests {
    static func setup(milk: ExpiryPolicy? = nil, cola: ExpiryPolicy? = nil) -> MachineSetup {
        let products = [
            Product(id: "milk", name: "Banana Milk", category: CategoryPath(["beverage", "milk"]), shelfLifeDays: 10, expiryPolicy: milk),
            Product(id: "cola", name: "Cola", category: CategoryPath(["beverage", "soda"]), shelfLifeDays: 180, expiryPolicy: cola),
            Fixtures.coffee,
        ]
        return try! MachineSetup(
            currency: Fixtures.won, catalog: Catalog(products),
            slots: [
                SlotSetup(id: "A1", product: "milk", price: Fixtures.won(1_200), capacity: 8, healthZone: "chilled"),
                SlotSetup(id: "A2", product: "cola", price: Fixtures.won(1_500), capacity: 10),
                SlotSetup(id: "B1", product: "coffee", price: Fixtures.won(900), capacity: 6),
            ],
            maximumCredit: Fixtures.won(10_000), payoutPolicy: .manual)
    }

    static func expired(_ count: Int, since: Instant) -> MachineEvent {
        .stockExpired(ExpiredStock(slot: "A1", product: "milk", count: count, since: since))
    }

    @Test func aPerishableSlotStopsAtItsNextItemsExpiryAndSaysSoOnce() {
        var rig = Rig(setup: Self.setup())
        let loaded = rig.now
        rig.advance(days: 10)
        rig.advance(seconds: -1)
        #expect(rig.apply(.tick).isEmpty, "a second before its shelf life ends, the milk still sells")
        rig.advance(seconds: 1)
        #expect(rig.apply(.tick).events == [Self.expired(8, since: loaded.adding(days: 10))])
        #expect(rig.machine.expiredSlots == ["A1": loaded.adding(days: 10)])
        rig.advance(seconds: 60)
        #expect(rig.apply(.tick).isEmpty, "announced once")
        #expect(rig.machine.offers.map(\.available) == [0, 10, 6])
        rig.insert(5_000)
        let refused = rig.select("A1")
        #expect(refused.rejections == [.expired("A1", since: loaded.adding(days: 10))])
        #expect(!refused.contains { if case .energiseRelay = $0 { true } else { false } })
        #expect(rig.machine.credit == Fixtures.won(5_000))
        #expect(
            Rejection.expired("A1", since: rig.now).description
                == "slot A1's items are past their shelf life: a technician must unload them (vendctl unload A1)")
        #expect(rig.select("A2").rejections.isEmpty, "the other slots keep selling")
    }

    @Test func aSelectionBeforeAnyTickIsRefusedAndTheExpiryAnnounced() {
        var rig = Rig(setup: Self.setup())
        let loaded = rig.now
        rig.insert(2_000)
        rig.advance(days: 11)
        let effects = rig.select("A1")
        #expect(effects.events == [Self.expired(8, since: loaded.adding(days: 10)), .rejected(.expired("A1", since: loaded.adding(days: 10)))])
        #expect(rig.machine.pendingVend == nil)
    }

    @Test func onlyTheItemThatWouldDropNextCounts() throws {
        var rig = Rig(setup: Self.setup(), stocked: false)
        let monday = rig.now
        rig.apply(.restock("A1", count: 1, loadedAt: nil))
        rig.advance(days: 3)
        rig.apply(.restock("A1", count: 4, loadedAt: nil))
        rig.advance(days: 9)
        rig.insert(1_200)
        rig.select("A1")
        #expect(rig.machine.pendingVend == nil, "the first lot expired on day 10")
        // Unloading the one expired item lets the younger lot sell.
        let unloaded = rig.apply(.unload("A1", count: 1))
        #expect(
            unloaded.events == [
                .stockChanged(slot: "A1", product: "milk", from: 5, to: 4, reason: .unloaded),
                .expiredStockDiscarded(slot: "A1", product: "milk", count: 1, value: Fixtures.won(1_200)),
                .expiredStockCleared(slot: "A1", product: "milk"),
                .coinAcceptanceChanged(true),
            ], "the only stocked slot sells again: coins are welcome again")
        #expect(rig.select("A1").rejections.isEmpty)
        rig.apply(.vendEnded(try #require(rig.pendingVend), .dropped))
        #expect(rig.machine.stock["A1"]?.lots.first?.loadedAt == monday.adding(days: 3))
    }

    @Test func unloadBooksTheDiscardedItemsAndClearsTheSlotOnlyWhenTheExpiredAreOut() {
        var rig = Rig(setup: Self.setup(), stocked: false)
        rig.apply(.restock("A1", count: 3, loadedAt: nil))
        rig.advance(days: 5)
        rig.apply(.restock("A1", count: 2, loadedAt: nil))
        rig.advance(days: 5)
        rig.apply(.tick)
        let some = rig.apply(.unload("A1", count: 2))
        #expect(
            some.events == [
                .stockChanged(slot: "A1", product: "milk", from: 5, to: 3, reason: .unloaded),
                .expiredStockDiscarded(slot: "A1", product: "milk", count: 2, value: Fixtures.won(2_400)),
            ])
        #expect(rig.machine.expiredSlots["A1"] != nil, "one expired item is still next")
        let rest = rig.apply(.unload("A1", count: nil))
        #expect(
            rest.events == [
                .stockChanged(slot: "A1", product: "milk", from: 3, to: 0, reason: .unloaded),
                .expiredStockDiscarded(slot: "A1", product: "milk", count: 1, value: Fixtures.won(1_200)),
                .expiredStockCleared(slot: "A1", product: "milk"),
            ], "the two fresh items are unloaded, not discarded")
        #expect(rig.machine.ledger.discarded["milk"]?.count == 3)
        #expect(rig.machine.ledger.discarded["milk"]?.amount == Fixtures.won(3_600))
        #expect(rig.machine.ledger.discardedTotal?.count == 3)
        #expect(rig.machine.integrityProblems.isEmpty)
        #expect(rig.apply(.unload("A1", count: nil)).rejections == [.nothingToUnload("A1")])
    }

    @Test func expiredItemsSellWhenTheFileAllowsIt() {
        // Default: refused in the perishable slot, sold from the others.
        var rig = Rig(setup: Self.setup())
        rig.advance(days: 200)
        rig.insert(1_500)
        #expect(rig.select("A2").rejections.isEmpty, "cola in a slot that is not perishable sells past its date by default")
        #expect(Set(rig.machine.expiredSlots.keys) == ["A1"], "only the perishable slot stops")

        // `expired: sell` on the milk (a best-before date); `expired: refuse` on the cola.
        var allowed = Rig(setup: Self.setup(milk: .sell, cola: .refuse))
        allowed.advance(days: 200)
        allowed.insert(1_200)
        #expect(allowed.select("A1").rejections.isEmpty, "the milk sells past its date when the file says so")
        allowed.apply(.vendEnded(allowed.pendingVend!, .dropped))
        allowed.insert(1_500)
        #expect(allowed.select("A2").rejections == [.expired("A2", since: Fixtures.start.adding(days: 180))])
    }

    @Test func aReloadThatAllowsExpiredItemsLetsTheSlotSellAgain() {
        var rig = Rig(setup: Self.setup())
        rig.advance(days: 10)
        rig.apply(.tick)
        #expect(!rig.machine.sellable("A1"))
        let effects = rig.apply(.reconfigure(Self.setup(milk: .sell)))
        #expect(effects.events.contains(.expiredStockCleared(slot: "A1", product: "milk")))
        #expect(rig.machine.sellable("A1"))
    }

    @Test func theStopOutlivesARestartAndCoinsAreRefusedWhenNothingElseSells() throws {
        let only = try MachineSetup(
            currency: Fixtures.won, catalog: Catalog([Fixtures.milk]),
            slots: [SlotSetup(id: "A1", product: "milk", price: Fixtures.won(1_200), capacity: 8, healthZone: "chilled")],
            maximumCredit: Fixtures.won(10_000), payoutPolicy: .manual)
        var rig = Rig(setup: only)
        #expect(rig.machine.acceptsCoins)
        rig.advance(days: 10)
        let effects = rig.apply(.tick)
        #expect(effects.contains(.setCoinAcceptance(false)))
        let restored = try JSON.roundTrip(MachineSnapshot(rig.machine)).machine
        #expect(restored == rig.machine)
        #expect(restored.expiredSlots["A1"] == Fixtures.start.adding(days: 10))
    }
}
