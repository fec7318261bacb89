import Foundation
import Testing
import VendFleetStore
import VenddTestSupport

/// The two engines behind one protocol.
enum Engine: String, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case postgresql

    var testDescription: String { rawValue }
}

/// A fresh, empty store of `engine`, and how to open it again (the same database).
struct StoreUnderTest {
    let open: () throws -> FleetStore
    let directory: TemporaryDirectory

    init(_ engine: Engine, maxAhead: Int64 = 1_000) throws {
        let directory = try TemporaryDirectory()
        self.directory = directory
        switch engine {
        case .sqlite:
            let path = directory.path + "/fleet.db"
            open = { try SQLiteFleetStore(path: path, maxAhead: maxAhead, now: 1) }
        case .postgresql:
            let conninfo = try PostgresCluster.running().createDatabase()
            open = { try PostgresFleetStore(conninfo: conninfo, maxAhead: maxAhead, now: 1) }
        }
    }
}

func event(_ machine: String, _ seq: Int64, id: String? = nil) -> IncomingEvent {
    let id = id ?? "\(machine)-\(seq)"
    return IncomingEvent(
        machine: machine, seq: seq, id: id, type: "vend-ended", at: 1_700_000_000_000 + seq,
        payload: #"{"id":"\#(id)","machine":"\#(machine)","seq":\#(seq),"type":"vend-ended","reason":"a \"quoted\" \\ text, 한글"}"#)
}

/// Every case runs on both engines: one schema, one behaviour.
@Suite("Fleet store contract", .timeLimit(.minutes(5)))
struct StoreContractTests {
    @Test(arguments: Engine.allCases)
    func aBatchIsStoredOnceAndAcknowledgedUpToItsContiguousEnd(_ engine: Engine) throws {
        let subject = try StoreUnderTest(engine)
        defer { subject.directory.remove() }
        let store = try subject.open()
        let batch = [event("m1", 1), event("m1", 2), event("m2", 1)]
        let first = try store.commit(events: batch, retained: [], receivedAt: 10)
        #expect(first.inserted == 3)
        #expect(first.acknowledgements == ["m1": 2, "m2": 1])
        // A resend of the whole batch (its ack was lost): nothing new, the same acks.
        let again = try store.commit(events: batch, retained: [], receivedAt: 11)
        #expect(again.inserted == 0)
        #expect(again.duplicates == 3)
        #expect(again.conflicts.isEmpty)
        #expect(again.acknowledgements == ["m1": 2, "m2": 1])
        let stored = try store.events(of: "m1", from: 1, limit: 10)
        #expect(stored.map(\.seq) == [1, 2])
        #expect(stored[0].payload == batch[0].payload)
        #expect(stored[0].receivedAt == 10)
        // The same event twice in one batch is one row.
        let twice = try store.commit(events: [event("m3", 1), event("m3", 1)], retained: [], receivedAt: 12)
        #expect(twice.inserted == 1 && twice.duplicates == 1)
    }

    @Test(arguments: Engine.allCases)
    func anotherIdUnderAHeldSequenceIsAConflictAndTheFirstIsKept(_ engine: Engine) throws {
        let subject = try StoreUnderTest(engine)
        defer { subject.directory.remove() }
        let store = try subject.open()
        _ = try store.commit(events: [event("m1", 1)], retained: [], receivedAt: 10)
        let outcome = try store.commit(events: [event("m1", 1, id: "impostor"), event("m1", 2)], retained: [], receivedAt: 11)
        #expect(outcome.conflicts == [EventConflict(machine: "m1", seq: 1, storedID: "m1-1", offeredID: "impostor")])
        #expect(outcome.inserted == 1)
        #expect(outcome.acknowledgements == ["m1": 2])
        #expect(try store.events(of: "m1", from: 1, limit: 10).map(\.id) == ["m1-1", "m1-2"])
        // Within one batch too.
        let inBatch = try store.commit(events: [event("m1", 3), event("m1", 3, id: "other")], retained: [], receivedAt: 12)
        #expect(inBatch.conflicts == [EventConflict(machine: "m1", seq: 3, storedID: "m1-3", offeredID: "other")])
    }

    @Test(arguments: Engine.allCases)
    func gapsAreListedAndTheAckWaitsAtTheLastContiguous(_ engine: Engine) throws {
        let subject = try StoreUnderTest(engine)
        defer { subject.directory.remove() }
        let store = try subject.open()
        var outcome = try store.commit(events: [1, 2, 4, 7, 8].map { event("m1", $0) } + [event("m2", 1)], retained: [], receivedAt: 10)
        #expect(outcome.acknowledgements == ["m1": 2, "m2": 1])
        #expect(
            try store.gaps() == [
                SequenceGap(machine: "m1", first: 3, last: 3, seenAt: 10), SequenceGap(machine: "m1", first: 5, last: 6, seenAt: 10),
            ])
        #expect(try store.progress().first { $0.machine == "m1" }.map { [$0.contiguous, $0.highest] } == [2, 8])
        // The first gap filled, in another batch: the ack moves to the next gap.
        outcome = try store.commit(events: [event("m1", 3)], retained: [], receivedAt: 11)
        #expect(outcome.acknowledgements == ["m1": 4])
        #expect(try store.gaps() == [SequenceGap(machine: "m1", first: 5, last: 6, seenAt: 11)])
        outcome = try store.commit(events: [event("m1", 6), event("m1", 5), event("m1", 9)], retained: [], receivedAt: 12)
        #expect(outcome.acknowledgements == ["m1": 9])
        #expect(try store.gaps().isEmpty)
        #expect(try store.events(of: "m1", from: 1, limit: 100).map(\.seq) == Array(1...9))
    }

    @Test(arguments: Engine.allCases)
    func aSequenceFromTheFutureIsRefusedAndNothingElseOfTheBatchIsLost(_ engine: Engine) throws {
        let subject = try StoreUnderTest(engine, maxAhead: 1_000)
        defer { subject.directory.remove() }
        let store = try subject.open()
        let outcome = try store.commit(events: [event("m1", 1), event("m1", 5_000_000), event("m1", 2)], retained: [], receivedAt: 10)
        #expect(outcome.refused.map(\.event.seq) == [5_000_000])
        #expect(outcome.refused.first?.reason.contains("from the future") == true)
        #expect(outcome.acknowledgements == ["m1": 2])
        #expect(try store.gaps().isEmpty)
    }

    @Test(arguments: Engine.allCases)
    func retainedMessagesKeepTheLatestPerSubject(_ engine: Engine) throws {
        let subject = try StoreUnderTest(engine)
        defer { subject.directory.remove() }
        let store = try subject.open()
        _ = try store.commit(
            events: [],
            retained: [
                RetainedUpdate(machine: "m1", subject: "state", payload: #"{"state":"in-service"}"#),
                RetainedUpdate(machine: "m1", subject: "state", payload: #"{"state":"service-mode"}"#),
                RetainedUpdate(machine: "m1", subject: "zones/cold", payload: #"{"zone":"cold"}"#),
            ], receivedAt: 10)
        _ = try store.commit(
            events: [], retained: [RetainedUpdate(machine: "m1", subject: "cash", payload: #"{"coinsIn":"3.00"}"#)], receivedAt: 11)
        #expect(
            try store.latest(of: "m1") == [
                "state": #"{"state":"service-mode"}"#, "zones/cold": #"{"zone":"cold"}"#, "cash": #"{"coinsIn":"3.00"}"#,
            ])
    }

    @Test(arguments: Engine.allCases)
    func stockCashAndZonesAreColumnsAndAStockReplacesTheMachinesSlots(_ engine: Engine) throws {
        let subject = try StoreUnderTest(engine)
        defer { subject.directory.remove() }
        let store = try subject.open()
        let a1 = SlotPosition(slot: "A1", product: "Cola", price: "1.50", available: 3, stock: 4, capacity: 8, earliestExpiry: 1_790_000_000_000)
        let b2 = SlotPosition(slot: "B2", product: "Water \"한글\"", price: "1.00", available: 0, stock: 0, capacity: 6, earliestExpiry: nil)
        let cash = CashPosition(
            currency: "EUR", coinsIn: "12.50", sales: "3.00", refunds: "0", billsIn: nil, changePaid: "9.50", unknownPayouts: nil,
            exactChangeOnly: false)
        let cold = ZonePosition(
            zone: "cold", kind: "cold", health: "ok", temperature: "4.5", sensorFault: nil, setPoint: "5", relayOn: true, maxReached: nil,
            since: nil, cause: nil, at: 1_790_000_000_000)
        _ = try store.commit(
            events: [],
            retained: [
                RetainedUpdate(machine: "m1", subject: "stock", payload: "{}", columns: .stock(currency: "EUR", slots: [a1, b2])),
                RetainedUpdate(machine: "m1", subject: "cash", payload: "{}", columns: .cash(cash)),
                RetainedUpdate(machine: "m1", subject: "zones/cold", payload: "{}", columns: .zone(cold)),
            ], receivedAt: 10)
        #expect(try store.slots(of: "m1") == [a1, b2])
        #expect(try store.cash(of: "m1") == cash)
        #expect(try store.zones(of: "m1") == [cold])
        #expect(try store.cash(of: "m2") == nil)
        // B2 reconfigured away: the next stock message is the whole machine.
        _ = try store.commit(
            events: [], retained: [RetainedUpdate(machine: "m1", subject: "stock", payload: "{}", columns: .stock(currency: "EUR", slots: [a1]))],
            receivedAt: 11)
        #expect(try store.slots(of: "m1") == [a1])
    }

    /// A `cash-collected` event fills the collection tables in its commit, once however often it
    /// is sent; the driver's count is recorded against it (a second entry corrects the first).
    @Test(arguments: Engine.allCases)
    func collectionsAreStoredOnceFromTheirEventsAndComparedWithTheDriversCount(_ engine: Engine) throws {
        let subject = try StoreUnderTest(engine)
        defer { subject.directory.remove() }
        let store = try subject.open()
        let first = CollectionColumns(
            number: 1, currency: "EUR", total: "13.50", since: nil, collectedBy: "ana (uid 1001)",
            denominations: [
                DenominationCount(kind: .coin, value: "0.50", count: 3), DenominationCount(kind: .coin, value: "2.00", count: 1),
                DenominationCount(kind: .bill, value: "10.00", count: 1),
            ])
        let collected = IncomingEvent(
            machine: "m1", seq: 2, id: "c-1", type: "cash-collected", at: 1_790_000_000_000, payload: "{}", collection: first)
        let batch = [event("m1", 1), collected, collected]
        #expect(try store.commit(events: batch, retained: [], receivedAt: 10).inserted == 2)
        #expect(try store.commit(events: batch, retained: [], receivedAt: 11).duplicates == 3)
        // The same sequence under another id is a conflict: its collection is not stored.
        let impostor = IncomingEvent(
            machine: "m1", seq: 2, id: "other", type: "cash-collected", at: 1, payload: "{}",
            collection: CollectionColumns(number: 9, currency: "EUR", total: "1.00", since: nil, collectedBy: nil, denominations: []))
        #expect(try store.commit(events: [impostor], retained: [], receivedAt: 12).conflicts.count == 1)

        var records = try store.collections(of: "m1")
        #expect(records.count == 1)
        #expect(records.first?.seq == 2 && records.first?.at == 1_790_000_000_000)
        #expect(records.first?.columns == first)
        #expect(records.first?.counted == nil && records.first?.difference == nil)
        #expect(try store.collections(of: "m2").isEmpty)

        // The driver counted one 0.50 less and a 0.20 the machine did not see.
        let entry = CountedCollection(
            denominations: [
                DenominationCount(kind: .bill, value: "10.00", count: 1), DenominationCount(kind: .coin, value: "0.50", count: 2),
                DenominationCount(kind: .coin, value: "2.00", count: 1), DenominationCount(kind: .coin, value: "0.20", count: 1),
            ], enteredBy: "driver-7", enteredAt: 1_790_000_100_000)
        try store.recordCount(machine: "m1", seq: 2, counted: entry)
        records = try store.collections(of: "m1")
        let record = try #require(records.first)
        #expect(record.counted?.enteredBy == "driver-7" && record.counted?.enteredAt == 1_790_000_100_000)
        #expect(record.countedTotal == "13.20")
        #expect(record.difference == "-0.30")
        #expect(
            record.comparison.map { "\($0.kind.rawValue) \($0.value): \($0.machine) \($0.counted.map(String.init) ?? "-") \($0.difference ?? 0)" }
                == [
                    "coin 0.20: 0 1 1", "coin 0.50: 3 2 -1", "coin 2.00: 1 1 0", "bill 10.00: 1 1 0",
                ])
        // A correction replaces the entry; an unknown collection is refused.
        try store.recordCount(
            machine: "m1", seq: 2,
            counted: CountedCollection(denominations: first.denominations, enteredBy: "driver-7", enteredAt: 1_790_000_200_000))
        #expect(try store.collections(of: "m1").first?.difference == "0.00")
        #expect(throws: FleetStoreError.self) {
            try store.recordCount(machine: "m1", seq: 1, counted: entry)
        }
        #expect(try store.collections(of: "m1").first?.counted?.enteredAt == 1_790_000_200_000)
    }

    @Test(arguments: Engine.allCases)
    func migrationsApplyToAnEmptyDatabaseOnceAndReopeningKeepsEverything(_ engine: Engine) throws {
        let subject = try StoreUnderTest(engine)
        defer { subject.directory.remove() }
        do {
            let store = try subject.open()
            #expect(store.migrationsApplied == Array(1...9))
            _ = try store.commit(events: [event("m1", 1), event("m1", 3)], retained: [], receivedAt: 10)
        }
        let reopened = try subject.open()
        #expect(reopened.migrationsApplied == [])
        #expect(try reopened.progress().map(\.contiguous) == [1])
        #expect(try reopened.gaps().map(\.first) == [2])
        let outcome = try reopened.commit(events: [event("m1", 2)], retained: [], receivedAt: 11)
        #expect(outcome.acknowledgements == ["m1": 3])
    }
}
