/// The statements one commit needs, shaped as whole-batch steps so that PostgreSQL can run each
/// as one statement over arrays and SQLite as a loop over one prepared statement.
protocol CommitSteps {
    func begin() throws
    func commitTransaction() throws
    func rollback()
    /// The machines' sequence states, locked until the end of the transaction (several ingesters
    /// may share one PostgreSQL). Machines never seen are absent.
    func lockStates(_ machines: [String]) throws -> [String: SequenceState]
    /// Inserts what is not held yet; returns the keys actually inserted.
    func insert(_ events: [IncomingEvent], receivedAt: Int64) throws -> Set<EventKey>
    /// The ids held under these keys.
    func storedIDs(_ keys: [EventKey]) throws -> [EventKey: String]
    /// Every sequence held above each machine's mark, sorted.
    func sequences(above marks: [String: Int64]) throws -> [String: [Int64]]
    func saveStates(_ states: [String: SequenceState], at: Int64) throws
    func replaceGaps(_ gaps: [String: [ClosedRange<Int64>]], seenAt: Int64) throws
    func saveLatest(_ updates: [RetainedUpdate], receivedAt: Int64) throws
    /// The updates' columns (schema 2): a `stock` replaces all of its machine's slots.
    func savePositions(_ updates: [RetainedUpdate], receivedAt: Int64) throws
    /// The collections of `cash-collected` events just inserted (schema 3).
    func saveCollections(_ events: [IncomingEvent], receivedAt: Int64) throws
    /// Adds the sales of `vend-ended` events just inserted to the day tables (schema 5).
    func saveSales(_ tally: SalesTally) throws
}

/// One batch, one transaction, the same on both engines.
enum CommitProcedure {
    static func run(
        _ steps: some CommitSteps, events: [IncomingEvent], retained: [RetainedUpdate], receivedAt: Int64, maxAhead: Int64
    ) throws -> CommitOutcome {
        try steps.begin()
        do {
            let outcome = try body(steps, events: events, retained: retained, receivedAt: receivedAt, maxAhead: maxAhead)
            try steps.commitTransaction()
            return outcome
        } catch {
            steps.rollback()
            throw error
        }
    }

    private static func body(
        _ steps: some CommitSteps, events: [IncomingEvent], retained: [RetainedUpdate], receivedAt: Int64, maxAhead: Int64
    ) throws -> CommitOutcome {
        // Sorted, so that concurrent ingesters lock machines in the same order (no deadlock).
        let machines = Set(events.map(\.machine)).sorted()
        let before = try steps.lockStates(machines)
        let admission = SequenceWalk.admit(events, states: before, maxAhead: maxAhead)
        var outcome = CommitOutcome(duplicates: admission.duplicates, conflicts: admission.conflicts, refused: admission.refused)

        let inserted = try steps.insert(admission.admitted, receivedAt: receivedAt)
        outcome.inserted = inserted.count
        // Only what this commit inserted: a resend's collection and sale are stored already.
        var counted: Set<EventKey> = []
        let new = admission.admitted.filter { inserted.contains($0.key) && counted.insert($0.key).inserted }
        let collections = new.filter { $0.collection != nil }
        if !collections.isEmpty { try steps.saveCollections(collections, receivedAt: receivedAt) }
        var sales = SalesTally()
        for event in new { if let sale = event.sale { sales.add(sale, machine: event.machine, at: event.at) } }
        if !sales.isEmpty { try steps.saveSales(sales) }
        let notInserted = admission.admitted.filter { !inserted.contains($0.key) }
        if !notInserted.isEmpty {
            let stored = try steps.storedIDs(notInserted.map(\.key))
            for event in notInserted {
                let storedID = stored[event.key] ?? ""
                if storedID == event.id {
                    outcome.duplicates += 1
                } else {
                    outcome.conflicts.append(EventConflict(machine: event.machine, seq: event.seq, storedID: storedID, offeredID: event.id))
                }
            }
        }

        // Above its mark a machine without a gap holds only what was just inserted; a machine
        // with a gap may hold more, so that is read back.
        let gapped = Dictionary(uniqueKeysWithValues: before.filter { $0.value.hasGap }.map { ($0.key, $0.value.contiguous) })
        var above = try gapped.isEmpty ? [:] : steps.sequences(above: gapped)
        for key in inserted.sorted(by: { $0.seq < $1.seq }) where gapped[key.machine] == nil {
            above[key.machine, default: []].append(key.seq)
        }
        var after: [String: SequenceState] = [:]
        var gaps: [String: [ClosedRange<Int64>]] = [:]
        for machine in machines {
            let state = before[machine] ?? SequenceState()
            let (next, open) = SequenceWalk.advance(state, heldAbove: above[machine] ?? [])
            outcome.acknowledgements[machine] = next.contiguous
            if next != state || before[machine] == nil { after[machine] = next }
            if state.hasGap || !open.isEmpty { gaps[machine] = open }
        }
        try steps.saveStates(after, at: receivedAt)
        if !gaps.isEmpty { try steps.replaceGaps(gaps, seenAt: receivedAt) }
        let latest = latestOnly(retained)
        try steps.saveLatest(latest, receivedAt: receivedAt)
        try steps.savePositions(latest.filter { $0.columns != nil }, receivedAt: receivedAt)
        return outcome
    }

    /// The last message per (machine, subject): one row can take one update per statement.
    private static func latestOnly(_ updates: [RetainedUpdate]) -> [RetainedUpdate] {
        var position: [String: Int] = [:]
        var latest: [RetainedUpdate] = []
        for update in updates {
            let key = update.machine + "\u{0}" + update.subject
            if let index = position[key] {
                latest[index] = update
            } else {
                position[key] = latest.count
                latest.append(update)
            }
        }
        return latest
    }
}
