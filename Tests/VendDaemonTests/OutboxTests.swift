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
@Suite(.timeLimit(.minutes(1))) struct OutboxTests {
    struct Rig {
        let directory: TemporaryDirectory
        let config: VenddConfig
        let time = ManualTimekeeper()
        let outbox: Outbox
        let controller: MachineController

        init() throws {
            directory = try TemporaryDirectory()
            config = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent("config/examples/cctalk-coins.yaml").path)
            let store = try MachineStore(directory: directory.path)
            _ = try store.restore()
            outbox = Outbox(machine: "m1", currency: config.machine.currency, keepDays: 2, logger: Logger(label: "test"))
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
        rig.outbox.published(sent[0].id, messageID: 1)
        rig.outbox.published(sent[1].id, messageID: 2)
        rig.outbox.published(sent[2].id, messageID: 3)
        rig.outbox.acknowledged(messageID: 1)
        rig.outbox.acknowledged(messageID: 2)
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
        rig.outbox.published(first[0].id, messageID: 7)
        rig.outbox.connectionRestarted()
        #expect(rig.outbox.takeUnsent() == first)
        rig.outbox.acknowledged(messageID: 7)
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

private final class Counter: @unchecked Sendable {
    // @unchecked: used by one test at a time.
    private var value: UInt64 = 0
    func next() -> UInt64 {
        value += 1
        return value
    }
}
