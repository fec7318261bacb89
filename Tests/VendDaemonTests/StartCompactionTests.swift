import Foundation
import Logging
import Testing
import VendConfig
import VendTime
import VenddTestSupport
import VendingCore

@testable import VendDaemon

/// A start writes a snapshot only when the files are not already the machine: a new machine, a
/// journal to fold in (a power cut after records), a repaired file. A plain restart writes
/// nothing (no wear on a board's storage, no write before READY).
@Suite(.timeLimit(.minutes(1))) struct StartCompactionTests {
    struct Files: Equatable {
        let snapshotInode: UInt64
        let journalBytes: Int
    }

    let directory: TemporaryDirectory
    let time = ManualTimekeeper()

    init() throws { directory = try TemporaryDirectory() }

    /// What `Startup.begin` does with the state before the hardware: restore, apply the
    /// configuration (the sample's, `edit`ed), then compact.
    func start(edit: (String) -> String = { $0 }) throws -> (controller: MachineController, snapshotIsCurrent: Bool) {
        let sample = try String(contentsOf: repositoryRoot.appendingPathComponent("config/examples/cctalk-coins.yaml"), encoding: .utf8)
        try edit(sample).write(toFile: directory.path + "/vendd.yaml", atomically: true, encoding: .utf8)
        let config = try ConfigLoader.load(file: directory.path + "/vendd.yaml")
        let store = try MachineStore(directory: directory.path)
        let logger = Logger(label: "test")
        let restored = try Startup.restore(from: store, config: config, outbox: nil, now: time.wallClockMilliseconds, logger: logger).get()
        let controller = MachineController(
            machine: restored.machine, store: store, config: config, logger: logger, timekeeper: time, relayTimers: time)
        #expect(controller.reconfigure(to: config) == nil)
        controller.compactAtStart(snapshotIsCurrent: restored.snapshotIsCurrent)
        return (controller, restored.snapshotIsCurrent)
    }

    func files() throws -> Files {
        let manager = FileManager.default
        let snapshot = try manager.attributesOfItem(atPath: directory.path + "/state.json")
        let journal = try manager.attributesOfItem(atPath: directory.path + "/journal.log")
        return Files(
            snapshotInode: (snapshot[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0,
            journalBytes: (journal[.size] as? NSNumber)?.intValue ?? -1)
    }

    @Test func aPlainRestartWritesNothingAndARestartAfterRecordsCompacts() throws {
        defer { directory.remove() }
        var (controller, current) = try start()
        #expect(!current, "a new machine has no snapshot yet")
        let first = try files()
        #expect(first.journalBytes == 0)
        controller.closeStore()

        (controller, current) = try start()
        #expect(current)
        #expect(try files() == first, "the snapshot is the machine: not written again")

        // A record, then the power goes (no snapshot at stop): the next start folds it in.
        controller.sendAndWait(.restock(SlotID("A1"), count: 3, loadedAt: nil))
        #expect(try files().journalBytes > 0)
        controller.closeStore()
        (controller, current) = try start()
        #expect(!current)
        let compacted = try files()
        #expect(compacted.journalBytes == 0 && compacted.snapshotInode != first.snapshotInode, "a new snapshot, the journal emptied")
        #expect(controller.currentMachine.stock[SlotID("A1")]?.count == 3, "\(controller.currentMachine.stock)")

        // A start that journals something itself (the technician edited a price) compacts too.
        controller.closeStore()
        (controller, current) = try start { $0.replacingOccurrences(of: "price: 1200", with: "price: 1300") }
        #expect(current, "the files were the machine")
        let repriced = try files()
        #expect(repriced.journalBytes == 0 && repriced.snapshotInode != compacted.snapshotInode, "the new setup is in the snapshot")
        controller.closeStore()
    }
}
