import Foundation
import Logging
import Testing
import VendConfig
import VendHardware
import VendStore
import VendTelemetry
import VendTime
import VenddTestSupport
import VendingCore

@testable import VendDaemon

/// The fleet outbox: events written in the journal record of their input, kept through
/// compaction until acknowledged, dropped only when older than the configured days.
@Suite(.timeLimit(.minutes(5))) struct OutboxTests {
    struct Rig {
        let directory: TemporaryDirectory
        let config: VenddConfig
        let time = ManualTimekeeper()
        let outbox: Outbox
        let controller: MachineController

        init(keepUntilStored: Bool = false) throws {
            directory = try TemporaryDirectory()
            config = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent("config/examples/cctalk-coins.yaml").path)
            let store = try MachineStore(directory: directory.path)
            _ = try store.restore()
            outbox = Outbox(
                machine: "m1", currency: config.machine.currency, keepDays: 2, keepUntilStored: keepUntilStored, logger: Logger(label: "test"))
            controller = MachineController(
                machine: Machine(setup: config.machineSetup), store: store, config: config,
                logger: Logger(label: "test"), timekeeper: time, outbox: outbox)
        }

        private let coins = Counter()

        /// A coin from the simulated acceptor, each with its own event number.
        func coin(_ minorUnits: Int64) {
            controller.sendAndWait(
                .coinInserted(
                    value: Money(minorUnits: minorUnits, currency: config.machine.currency),
                    event: CoinEventID(source: "test", sequence: coins.next())))
        }

        /// What a restart finds: the journal's records, and the outbox rebuilt from them.
        func restart() throws -> (entries: [JournalEntry], outbox: Outbox) {
            controller.closeStore()
            let store = try MachineStore(directory: directory.path)
            defer { store.close() }
            let restored = try store.restore()
            let outbox = Outbox(machine: "m1", currency: config.machine.currency, keepDays: 2, logger: Logger(label: "test"))
            try outbox.restore(
                saved: store.readCompanion(Outbox.fileName), journaled: restored.entries.flatMap { $0.outbox ?? [] },
                now: time.wallClockMilliseconds)
            return (restored.entries, outbox)
        }
    }

    @Test func eachEventIsInTheJournalRecordOfItsInput() throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        let slot = rig.config.slots[0].id
        rig.controller.sendAndWait(.restock(slot, count: nil, loadedAt: nil))
        rig.coin(500)
        let pending = rig.outbox.takeUnsent()
        #expect(pending.map(\.type) == [.stockChanged, .coinCredited, .creditChanged])
        let (entries, restored) = try rig.restart()
        #expect(entries.count == 2)
        #expect(entries[0].outbox?.map(\.id) == [pending[0].id])
        #expect(entries[1].outbox?.map(\.id) == [pending[1].id, pending[2].id])
        #expect(restored.takeUnsent() == pending, "same ids, same contents after a restart")
    }

    @Test func compactionKeepsWhatTheBrokerHasNotAcknowledged() throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        for _ in 0..<3 { rig.coin(100) }
        let sent = rig.outbox.takeUnsent()
        #expect(sent.count == 6)
        // The broker acknowledged the first two; the rest are in flight or lost with the connection.
        rig.outbox.published([sent[0].id], messageID: 1)
        rig.outbox.published([sent[1].id], messageID: 2)
        rig.outbox.published([sent[2].id], messageID: 3)
        rig.outbox.acknowledged(messageID: 1, now: rig.time.now)
        rig.outbox.acknowledged(messageID: 2, now: rig.time.now)
        rig.controller.saveSnapshot()
        let (entries, restored) = try rig.restart()
        #expect(entries.isEmpty, "the journal was compacted")
        #expect(restored.takeUnsent().map(\.id) == sent.dropFirst(2).map(\.id))
    }

    @Test func aReconnectionSendsEverythingUnacknowledgedAgain() throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        rig.coin(100)
        let first = rig.outbox.takeUnsent()
        #expect(rig.outbox.takeUnsent().isEmpty, "sent once per connection")
        rig.outbox.published([first[0].id], messageID: 7)
        rig.outbox.connectionRestarted()
        #expect(rig.outbox.takeUnsent() == first)
        rig.outbox.acknowledged(messageID: 7, now: rig.time.now)
        #expect(rig.outbox.summary.count == 2, "an acknowledgement from before the reconnection is not this connection's")
    }

    @Test func eventsOlderThanTheKeptDaysAreDropped() throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        rig.coin(100)
        rig.time.advance(by: .seconds(86_400))
        rig.coin(100)
        rig.time.advance(by: .seconds(86_400 + 1))
        let (_, restored) = try rig.restart()
        #expect(restored.takeUnsent().compactMap(\.credit) == ["200"], "the first coin's events are more than 2 days old")
    }
}

/// Sequence numbers: contiguous, durable with the event's id, never given twice.
@Suite(.timeLimit(.minutes(5))) struct OutboxSequenceTests {
    typealias Rig = OutboxTests.Rig

    @Test func sequencesAreContiguousAndGoOnAfterARestartAndACompaction() throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        rig.controller.sendAndWait(.restock(rig.config.slots[0].id, count: nil, loadedAt: nil))
        rig.coin(500)
        let first = rig.outbox.takeUnsent()
        #expect(first.map(\.seq) == [1, 2, 3])
        // Every event acknowledged, then compacted: outbox.json keeps the last number, not the events.
        for (index, event) in first.enumerated() { rig.outbox.published([event.id], messageID: Int32(index + 1)) }
        for index in first.indices { rig.outbox.acknowledged(messageID: Int32(index + 1), now: rig.time.now) }
        rig.controller.saveSnapshot()
        rig.coin(100)
        let second = rig.outbox.takeUnsent()
        #expect(second.map(\.seq) == [4, 5])
        let (entries, restored) = try rig.restart()
        #expect(entries.flatMap { $0.outbox ?? [] } == second, "the journal record holds id and seq together")
        #expect(restored.takeUnsent() == second, "same ids, same numbers after a restart")
        #expect(restored.summary.lastSequence == 5)
        let next = restored.numbered([restored.event(.fault, reason: "test", at: rig.time.wallClockMilliseconds)])
        #expect(next.map(\.seq) == [6], "a restart goes on after the last number, even with the outbox empty of older ones")
    }

    @Test func anEventNoInputCausedIsJournaledInARecordOfItsOwn() throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        rig.coin(100)
        rig.controller.requests.journal([rig.outbox.event(.dexSession, reason: "DEX test: delivered", at: rig.time.wallClockMilliseconds)])
        rig.coin(100)
        #expect(rig.outbox.takeUnsent().map(\.seq) == [1, 2, 3, 4, 5])
        let (entries, restored) = try rig.restart()
        #expect(entries.count == 3)
        #expect(entries[1].input == nil && entries[1].outbox?.map(\.type) == [.dexSession] && entries[1].outbox?.first?.seq == 3)
        #expect(restored.takeUnsent().map(\.seq) == [1, 2, 3, 4, 5])
    }

    @Test func aStateResetKeepsTheJournaledEventsAndTheirNumbers() throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        rig.controller.saveSnapshot()
        rig.coin(100)
        let journaled = rig.outbox.takeUnsent()
        rig.controller.closeStore()
        let store = try MachineStore(directory: rig.directory.path)
        #expect(OutboxFile.keepThroughReset(store) == nil)
        #expect(try store.reset() != nil, "the journal was moved aside")
        let restored = try store.restore()
        #expect(restored.isFresh)
        let outbox = Outbox(machine: "m1", currency: rig.config.machine.currency, keepDays: 2, logger: Logger(label: "test"))
        try outbox.restore(saved: store.readCompanion(Outbox.fileName), journaled: [], now: rig.time.wallClockMilliseconds)
        store.close()
        #expect(outbox.takeUnsent() == journaled, "still delivered, with the same numbers")
        #expect(outbox.summary.lastSequence == 2)
    }

    @Test func eventsSavedWithoutSequencesAreNumberedOnceAfterTheHighestKnown() throws {
        let time = ManualTimekeeper()
        let now = time.wallClockMilliseconds
        func old(_ credit: String) -> TelemetryEvent {
            var event = TelemetryEvent(id: UUID().uuidString.lowercased(), machine: "m1", at: now, type: .creditChanged, currency: "KRW")
            event.credit = credit
            return event
        }
        // An outbox.json as a vendd without sequences wrote it (a bare list), and a journal record of its.
        let saved = Array(try JSONEncoder().encode([old("100"), old("200")]))
        let journaled = [old("300")]
        let outbox = Outbox(machine: "m1", currency: Currency(code: "KRW", minorDigits: 0), keepDays: 2, logger: Logger(label: "test"))
        try outbox.restore(saved: saved, journaled: journaled, now: now)
        #expect(outbox.takeUnsent().isEmpty, "numbers not yet on disk are not published")
        let file = try outbox.encoded(now: now)
        outbox.saved(through: file.lastSequence)
        let numbered = outbox.takeUnsent()
        #expect(numbered.map(\.seq) == [1, 2, 3] && numbered.compactMap(\.credit) == ["100", "200", "300"], "in the order they happened")
        // The next start reads the new file: the same numbers, not new ones.
        let again = Outbox(machine: "m1", currency: Currency(code: "KRW", minorDigits: 0), keepDays: 2, logger: Logger(label: "test"))
        try again.restore(saved: file.bytes, journaled: journaled, now: now)
        #expect(again.takeUnsent() == numbered)
        #expect(again.summary.lastSequence == 3)
    }
}

/// keep_until_stored: the store's acknowledgement, not the broker's PUBACK, empties the outbox.
@Suite(.timeLimit(.minutes(5))) struct OutboxStoreAcknowledgementTests {
    typealias Rig = OutboxTests.Rig

    /// Three coins' events handed to the client and acknowledged by the broker.
    func delivered(_ rig: Rig) -> [TelemetryEvent] {
        for _ in 0..<3 { rig.coin(100) }
        let events = rig.outbox.takeUnsent()
        for (index, event) in events.enumerated() {
            rig.outbox.published([event.id], messageID: Int32(index + 1))
            rig.outbox.acknowledged(messageID: Int32(index + 1), now: rig.time.now)
        }
        return events
    }

    func ack(_ seq: Int, _ rig: Rig) -> Outbox.StoredOutcome {
        rig.outbox.storeAcknowledged(Array(#"{"seq": \#(seq), "at": 1}"#.utf8), now: rig.time.now)
    }

    @Test func onlyTheStoresAcknowledgementEmptiesTheOutbox() throws {
        let rig = try Rig(keepUntilStored: true)
        defer { rig.directory.remove() }
        let events = delivered(rig)
        #expect(rig.outbox.summary.count == 6, "the broker's PUBACK is not enough")
        #expect(rig.outbox.summary.deliveredNotStored == 6)
        #expect(ack(4, rig) == .accepted(seq: 4, removed: 4))
        #expect(rig.outbox.summary.count == 2 && rig.outbox.summary.stored == 4)
        rig.controller.saveSnapshot()
        let (_, restored) = try rig.restart()
        #expect(restored.takeUnsent().map(\.id) == events.suffix(2).map(\.id), "what the store lacks survives the restart")
        #expect(ack(6, rig) == .accepted(seq: 6, removed: 2))
        #expect(rig.outbox.summary.count == 0)
    }

    @Test func withoutTheKeyThePUBACKEmptiesTheOutbox() throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        _ = delivered(rig)
        #expect(rig.outbox.summary.count == 0)
    }

    @Test func whatTheStoreDoesNotAcknowledgeIsSentAgainAfterABackoff() throws {
        let rig = try Rig(keepUntilStored: true)
        defer { rig.directory.remove() }
        let events = delivered(rig)
        #expect(rig.outbox.takeUnsent().isEmpty)
        rig.time.advance(by: .seconds(29))
        #expect(!rig.outbox.resendIfDue(now: rig.time.now), "not before 30 s")
        rig.time.advance(by: .seconds(1))
        #expect(rig.outbox.resendIfDue(now: rig.time.now))
        let again = rig.outbox.takeUnsent()
        #expect(again == events, "the same events: same ids, same numbers")
        // The broker takes them again; the store still says nothing: the next wait is 60 s.
        for (index, event) in again.enumerated() {
            rig.outbox.published([event.id], messageID: Int32(100 + index))
            rig.outbox.acknowledged(messageID: Int32(100 + index), now: rig.time.now)
        }
        rig.time.advance(by: .seconds(59))
        #expect(!rig.outbox.resendIfDue(now: rig.time.now), "the wait doubled")
        rig.time.advance(by: .seconds(1))
        #expect(rig.outbox.resendIfDue(now: rig.time.now))
        #expect(rig.outbox.takeUnsent().count == 6)
        for (index, event) in events.enumerated() {
            rig.outbox.published([event.id], messageID: Int32(200 + index))
            rig.outbox.acknowledged(messageID: Int32(200 + index), now: rig.time.now)
        }
        // Progress from the store: the wait for the rest starts over at 30 s.
        #expect(ack(2, rig) == .accepted(seq: 2, removed: 2))
        rig.time.advance(by: .seconds(30))
        #expect(rig.outbox.resendIfDue(now: rig.time.now))
        #expect(rig.outbox.takeUnsent().map(\.seq) == [3, 4, 5, 6])
    }

    /// A backlog message carries several events under one message id: its PUBACK counts for all
    /// of them, and while it is in flight none of them is sent again.
    @Test func aBacklogMessagesPUBACKCountsForEveryEventInIt() throws {
        for keepUntilStored in [false, true] {
            let rig = try Rig(keepUntilStored: keepUntilStored)
            defer { rig.directory.remove() }
            for _ in 0..<3 { rig.coin(100) }
            let events = rig.outbox.takeUnsent()
            rig.outbox.published(events.prefix(4).map(\.id), messageID: 1)
            rig.outbox.published(events.suffix(2).map(\.id), messageID: 2)
            rig.outbox.acknowledged(messageID: 1, now: rig.time.now)
            if keepUntilStored {
                #expect(rig.outbox.summary.count == 6 && rig.outbox.summary.deliveredNotStored == 4)
                rig.time.advance(by: .seconds(30))
                #expect(rig.outbox.resendIfDue(now: rig.time.now))
                #expect(rig.outbox.takeUnsent().map(\.seq) == [1, 2, 3, 4], "the message still in flight is not sent again")
            } else {
                #expect(rig.outbox.summary.count == 2, "the four events of the acknowledged message left")
                rig.outbox.unsent(events.suffix(2).map(\.id))
                #expect(rig.outbox.takeUnsent().map(\.seq) == [5, 6])
            }
        }
    }

    @Test func aReconnectionSendsAgainWhatTheStoreLacks() throws {
        let rig = try Rig(keepUntilStored: true)
        defer { rig.directory.remove() }
        let events = delivered(rig)
        rig.outbox.connectionRestarted()
        #expect(rig.outbox.takeUnsent() == events)
    }

    @Test(arguments: [
        "not json", #"{"seq": "7"}"#, #"{"seq": -1}"#, #"{"sequence": 2}"#, #"[1]"#, #"{"seq": 7}"#, #"{"seq": 18446744073709551615}"#,
    ])
    func aMalformedOrFutureAcknowledgementIsIgnored(_ payload: String) throws {
        let rig = try Rig(keepUntilStored: true)
        defer { rig.directory.remove() }
        _ = delivered(rig)
        let outcome = rig.outbox.storeAcknowledged(Array(payload.utf8), now: rig.time.now)
        guard case .ignored(let reason) = outcome else {
            Issue.record("\(payload) was taken: \(outcome)")
            return
        }
        #expect(reason.contains("beyond the last one this machine gave (6)") || reason.contains("not a {\"seq\": N} acknowledgement"), "\(reason)")
        #expect(rig.outbox.summary.count == 6, "nothing left the outbox")
        #expect(rig.outbox.summary.stored == nil)
    }
}

private final class Counter: @unchecked Sendable {
    // @unchecked: used by one test at a time.
    private var value: UInt64 = 0
    func next() -> UInt64 {
        value += 1
        return value
    }
}
