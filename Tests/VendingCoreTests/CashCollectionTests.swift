import Testing
import VendingCore

/// The cash box's collection: what the machine counted into the box since the last one, per
/// denomination, handed over to a journaled record; the tubes stay.
@Suite struct CashCollectionTests {
    static func coin(_ value: Int64, _ sequence: UInt64, _ route: CoinRoute? = nil) -> Input {
        .coinInserted(value: Fixtures.won(value), event: CoinEventID(source: "changer", sequence: sequence), route: route)
    }

    static func bill(_ value: Int64, _ sequence: UInt64) -> Input {
        .billStacked(value: Fixtures.won(value), event: CoinEventID(source: "validator", sequence: sequence))
    }

    static func collection(_ effects: [Effect]) -> CashCollection? {
        effects.events.compactMap { if case .cashCollected(let collected) = $0 { collected } else { nil } }.first
    }

    @Test func outsideServiceModeNothingIsCollected() {
        var rig = Rig()
        rig.apply(Self.coin(500, 1))
        let before = rig.machine
        #expect(rig.apply(.collectCash(by: "ana")).events == [.rejected(.notInServiceMode)])
        #expect(rig.machine == before)
        #expect(rig.machine.ledger.cashBox.coins == [CoinCount(value: Fixtures.won(500), count: 1)])
    }

    @Test func aCollectionTakesTheCashBoxPerDenominationAndLeavesTheTubes() throws {
        var rig = Rig(setup: Fixtures.setup(payoutPolicy: .change))
        rig.apply(Self.coin(500, 1, .cashBox))
        rig.apply(Self.coin(100, 2, .tubes))
        rig.apply(Self.coin(500, 3, .cashBox))
        rig.apply(Self.coin(100, 4))  // no route: the cash box, as acceptors without tubes say
        rig.apply(Self.bill(1_000, 1))
        rig.apply(.changeInventory([ChangeStock(value: Fixtures.won(100), count: 7)]))
        rig.apply(.setServiceMode(true))
        let coinsIn = rig.machine.ledger.coinsIn
        rig.advance(seconds: 60)

        let collected = try #require(Self.collection(rig.apply(.collectCash(by: "ana (uid 1001)"))))
        #expect(collected.number == 1)
        #expect(collected.at == rig.now)
        #expect(collected.since == nil)
        #expect(collected.by == "ana (uid 1001)")
        #expect(collected.coins == [CoinCount(value: Fixtures.won(100), count: 1), CoinCount(value: Fixtures.won(500), count: 2)])
        #expect(collected.bills == [CoinCount(value: Fixtures.won(1_000), count: 1)])
        #expect(collected.total == Fixtures.won(2_100))
        // The box counts from zero; the tubes, the credit and the whole-life books are untouched.
        #expect(rig.machine.ledger.cashBox.coins.isEmpty && rig.machine.ledger.cashBox.bills.isEmpty)
        #expect(rig.machine.ledger.cashBox.total(in: Fixtures.won) == Fixtures.won(0))
        #expect(rig.machine.changeInventory == [ChangeStock(value: Fixtures.won(100), count: 7)])
        #expect(rig.machine.ledger.coinsIn == coinsIn)
        #expect(rig.machine.credit == Fixtures.won(2_200))
        #expect(rig.machine.integrityProblems.isEmpty)

        // The next one counts from the last: its number follows, and it says since when.
        let first = rig.now
        rig.apply(.setServiceMode(false))
        rig.apply(Self.coin(500, 5, .cashBox))
        rig.apply(.setServiceMode(true))
        rig.advance(seconds: 60)
        let second = try #require(Self.collection(rig.apply(.collectCash(by: "bo"))))
        #expect(second.number == 2)
        #expect(second.since == first)
        #expect(second.coins == [CoinCount(value: Fixtures.won(500), count: 1)])
        #expect(second.bills.isEmpty)
        #expect(second.total == Fixtures.won(500))
        #expect(rig.machine.ledger.cashBox.lastCollectedAt == rig.now)
    }

    /// An empty box is still a collection: the driver opened it and found nothing, on the record.
    @Test func anEmptyBoxIsCollectedAsNothing() throws {
        var rig = Rig()
        rig.apply(.setServiceMode(true))
        let collected = try #require(Self.collection(rig.apply(.collectCash(by: "ana"))))
        #expect(collected.coins.isEmpty && collected.bills.isEmpty)
        #expect(collected.total == Fixtures.won(0))
    }

    /// Float put in during fill mode that the changer routed to the cash box is in the box: the
    /// driver finds it there. A replayed coin event is counted nowhere twice.
    @Test func floatRoutedToTheBoxCountsAndDuplicatesDoNot() throws {
        var rig = Rig(setup: Fixtures.setup(payoutPolicy: .change))
        rig.apply(.setServiceMode(true))
        rig.apply(.setFillMode(true))
        rig.apply(Self.coin(500, 1, .cashBox))
        rig.apply(Self.coin(100, 2, .tubes))
        rig.apply(Self.coin(500, 1, .cashBox))
        rig.apply(.setFillMode(false))
        let collected = try #require(Self.collection(rig.apply(.collectCash(by: "ana"))))
        #expect(collected.coins == [CoinCount(value: Fixtures.won(500), count: 1)])
    }

    /// Journaled as an input: replayed on a restored snapshot it gives the same record and the
    /// same machine, and the box's counts survive a snapshot between collections.
    @Test func aRestoredMachineReplaysTheCollectionIdentically() throws {
        var rig = Rig()
        rig.apply(Self.coin(1_000, 1))
        rig.apply(Self.coin(500, 2))
        rig.apply(.setServiceMode(true))
        var restored = try JSON.roundTrip(MachineSnapshot(rig.machine)).machine
        #expect(restored.ledger.cashBox == rig.machine.ledger.cashBox)
        let original = rig.apply(.collectCash(by: "ana"))
        #expect(restored.apply(.collectCash(by: "ana"), at: rig.now) == original)
        #expect(restored == rig.machine)
        let again = try JSON.roundTrip(MachineSnapshot(restored)).machine
        #expect(again.ledger.cashBox.nextCollection == 2)
        #expect(again.ledger.cashBox.lastCollectedAt == rig.now)
    }
}
