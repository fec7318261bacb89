import Logging
import VendStore
import VendingCore

/// Why the machine is out of order, and whether it can end by itself.
enum MachineFault: Sendable {
    /// The state cannot be written (disk full, read-only, I/O error). Every tick tries to save
    /// the machine again; the first save that succeeds puts it back in service.
    case storage(String)
    /// The hardware is gone; a restart (or reload) is needed.
    case hardware(String)

    var reason: String {
        switch self {
        case .storage(let reason): "\(reason); vendd retries every second and resumes by itself"
        case .hardware(let reason): reason
        }
    }

    var isHardware: Bool {
        if case .hardware = self { true } else { false }
    }
}

/// The fault policy and the store's upkeep: out of order and back, snapshots and compaction. On
/// the machine's lane, with its state; the devices hear of a fault beginning or ending once the
/// state is let go (`MachineController.process`, `onLane`), before the input's own effects.
extension MachineController {
    func enterFault(_ fault: MachineFault, _ state: inout State) {
        if case .hardware = state.fault { return }
        if case .storage = state.fault, case .storage = fault { return }
        state.fault = fault
        // Journaled in a record of its own when the journal works (a hardware fault); when it is
        // what failed, durable (and published) from the save that ends the fault.
        if let outbox { journalTelemetry([outbox.event(.fault, reason: fault.reason, at: timekeeper.wallClockMilliseconds)], &state) }
        switch fault {
        case .storage(let reason):
            logger.critical(
                "OUT OF ORDER: \(reason). Sales and coins are stopped; every coin already credited is kept. Free space or fix the file system: vendd retries every second and resumes by itself."
            )
        case .hardware(let reason):
            logger.critical("OUT OF ORDER: \(reason). Sales are stopped; fix the cause and restart vendd.")
        }
    }

    /// A storage fault ends with the first save of the whole machine that succeeds.
    func retryStorage(_ state: inout State) {
        guard case .storage = state.fault else { return }
        do {
            try saveOutbox(state)
            try state.store.resume(with: MachineSnapshot(state.machine))
        } catch {
            return
        }
        state.fault = nil
        logger.notice("the state can be written again: the machine is saved and back in service")
    }

    func compactIfDue(_ state: inout State) {
        guard state.store.entriesSinceSnapshot >= snapshotEvery else { return }
        saveSnapshot(&state)
    }

    /// Writes the whole machine and empties the journal.
    func saveSnapshot() {
        onLane { self.saveSnapshot(&$0) }
    }

    /// At start, once the saved state is replayed and the configuration applied: a snapshot, so
    /// that the journal replayed is not replayed again, unless the files already are the machine
    /// (`snapshotIsCurrent`, and nothing journaled since, by the start itself either). A plain
    /// restart then writes nothing: no wear on the board's storage, and READY a write sooner.
    func compactAtStart(snapshotIsCurrent: Bool) {
        onLane { state in
            guard !snapshotIsCurrent || state.store.entriesSinceSnapshot > 0 else { return }
            self.saveSnapshot(&state)
        }
    }

    private func saveSnapshot(_ state: inout State) {
        if state.store.isWaitingToResume { return retryStorage(&state) }
        do {
            try saveOutbox(state)
            try state.store.writeSnapshot(MachineSnapshot(state.machine))
        } catch {
            enterFault(.storage("the state snapshot cannot be written: \(error)"), &state)
        }
    }

    /// The unacknowledged events, before a compaction empties the journal that holds them.
    private func saveOutbox(_ state: State) throws(StateStoreError) {
        guard let outbox else { return }
        let file: (bytes: [UInt8], lastSequence: UInt64)
        do {
            file = try outbox.encoded(now: timekeeper.wallClockMilliseconds)
        } catch {
            throw .encoding(what: "fleet outbox", reason: "\(error)")
        }
        try state.store.replaceCompanion(Outbox.fileName, with: file.bytes)
        outbox.saved(through: file.lastSequence)
    }
}
