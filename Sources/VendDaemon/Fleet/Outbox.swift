import FoundationEssentials
import Logging
import Synchronization
import VendTelemetry
import VendingCore

/// The events waiting for an acknowledgement: the broker's PUBACK, or with `keepUntilStored` the
/// fleet store's (`<prefix>/<machine>/stored`). Durability is not kept here: each event is written,
/// with its id and sequence number, in the journal record of the input that caused it
/// (`JournalEntry.outbox`), and at compaction the ones still unacknowledged go to `outbox.json`
/// (with the last sequence number given) before the journal is emptied. This object is the
/// in-memory view both sides share: the machine's lane numbers and adds (never waiting for the
/// network), the MQTT thread takes, marks sent and removes on acknowledgement.
final class Outbox: Sendable {
    static let fileName = "outbox.json"

    let machine: String
    let currency: Currency
    let keepDays: Int
    /// False when `publish:` leaves out `events`: nothing is kept, only the retained topics go.
    let keepsEvents: Bool
    /// Events leave on the store's acknowledgement, not on the broker's PUBACK.
    let keepUntilStored: Bool
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        /// Oldest first, in sequence order.
        var pending: [TelemetryEvent] = []
        /// Ids handed to the client since the last (re)connection or resend.
        var sent: Set<String> = []
        /// Message id → the ids of the event or events it carries, until PUBACK.
        var inFlight: [Int32: [String]] = [:]
        /// The messages of `inFlight` that are backlog batches.
        var backlogInFlight: Set<Int32> = []
        var wake: (@Sendable () -> Void)?
        /// Events added on the machine's lane since it last woke the publisher, or a retained
        /// message changed without one (`retainedChanged`).
        var addedUnwoken = false
        var connected = false
        /// The last sequence number given to an event (durable or not).
        var lastSequence: UInt64 = 0
        /// Every event up to this sequence is on disk (journal or outbox.json); later ones were
        /// applied while the state could not be written and are not published until they are,
        /// so that a sequence the fleet has seen is never given again after a restart.
        var durableThrough: UInt64 = 0
        /// The store's acknowledgement (keepUntilStored); nil until one is received.
        var stored: UInt64?
        var resend = ResendBackoff()
    }

    init(
        machine: String, currency: Currency, keepDays: Int, keepsEvents: Bool = true, keepUntilStored: Bool = false, logger: Logger
    ) {
        self.machine = machine
        self.currency = currency
        self.keepDays = keepDays
        self.keepsEvents = keepsEvents
        self.keepUntilStored = keepUntilStored
        self.logger = logger
    }

    /// The telemetry of an input's effects, each with its id (not yet numbered).
    func events(from effects: [Effect], at: Instant) -> [TelemetryEvent] {
        guard keepsEvents else { return [] }
        return effects.events.compactMap { TelemetryEvent($0, machine: machine, currency: currency, at: at) }
    }

    func event(_ type: TelemetryEvent.Kind, reason: String, at: Int64) -> TelemetryEvent {
        var event = TelemetryEvent(id: UUID().uuidString.lowercased(), machine: machine, at: at, type: type, currency: currency.code)
        event.reason = reason
        return event
    }

    // MARK: - Numbering (on the machine's lane)

    /// `events` with the next sequence numbers, to journal: nothing is used up until `add`, so an
    /// input refused because its record could not be written leaves no gap. Only the machine's
    /// lane numbers and adds, which is what keeps two inputs from taking the same numbers.
    func numbered(_ events: [TelemetryEvent]) -> [TelemetryEvent] {
        guard keepsEvents else { return [] }
        let last = state.withLock { $0.lastSequence }
        return events.enumerated().map { index, event in
            var event = event
            event.seq = last + UInt64(index) + 1
            return event
        }
    }

    /// Called on the machine's lane once the numbered events are journaled (`durable`), or
    /// applied while the state cannot be written (published once a save succeeds). The publisher
    /// is woken by `wakeIfAdded`, once the lane has published the view its retained messages read.
    func add(_ events: [TelemetryEvent], durable: Bool) {
        guard keepsEvents, let last = events.last?.seq else { return }
        state.withLock { state in
            state.pending += events
            state.lastSequence = last
            if durable { state.durableThrough = last }
            state.addedUnwoken = true
        }
    }

    /// On the machine's lane: an input changed what a retained message shows without an event
    /// of its own (`MachineEvent.changesRetainedOnly`); the publisher is woken as for an event,
    /// once the lane published the view. Whether events are kept or not.
    func retainedChanged() {
        state.withLock { $0.addedUnwoken = true }
    }

    /// On the machine's lane, after it published its view: the publisher woken if events were
    /// added or a retained message changed (woken earlier, it could send a service-mode event
    /// beside the state before it).
    func wakeIfAdded() {
        let wake = state.withLock { state in
            defer { state.addedUnwoken = false }
            return state.addedUnwoken ? state.wake : nil
        }
        wake?()
    }

    func onAdd(_ wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.wake = wake }
    }

    // MARK: - Restart and compaction

    /// Start-up: the events saved at the last compaction plus those journaled after it, each once,
    /// minus those older than `keepDays` (logged). Events a vendd without sequences wrote are
    /// numbered here, after the highest number known, in the order they happened; they are made
    /// durable by the start-up compaction, and published only then. Throws when `outbox.json`
    /// cannot be decoded.
    func restore(saved: [UInt8]?, journaled: [TelemetryEvent], now: Int64) throws {
        let file = (try saved.map { try OutboxFile.decode($0) } ?? .empty).adding(journaled: journaled)
        let onDisk = file.lastSequence
        var last = onDisk
        var kept = withinKeep(file.events, now: now)
        for index in kept.indices where kept[index].seq == nil {
            last += 1
            kept[index].seq = last
        }
        if last > onDisk {
            logger.notice("fleet outbox: \(last - onDisk) event(s) saved by a vendd without sequence numbers numbered \(onDisk + 1) to \(last)")
        }
        kept.sort { ($0.seq ?? 0) < ($1.seq ?? 0) }
        state.withLock { state in
            state.pending = kept
            state.lastSequence = last
            state.durableThrough = onDisk
        }
        if !kept.isEmpty {
            logger.notice(
                "fleet outbox: \(kept.count) event(s) not yet acknowledged by the \(keepUntilStored ? "store" : "broker"); they are sent when it is reached"
            )
        }
    }

    /// What `outbox.json` holds at a compaction: every unacknowledged event still within
    /// `keepDays`, and the last sequence number given. Once written, `saved(through:)`.
    func encoded(now: Int64) throws -> (bytes: [UInt8], lastSequence: UInt64) {
        let file = state.withLock { state in
            state.pending = withinKeep(state.pending, now: now)
            return OutboxFile(lastSequence: state.lastSequence, events: state.pending)
        }
        return (Array(try JSONEncoder().encode(file)), file.lastSequence)
    }

    /// `outbox.json` is on disk with every event up to `sequence`: they may be published.
    func saved(through sequence: UInt64) {
        let wake = state.withLock { state in
            state.durableThrough = max(state.durableThrough, sequence)
            return state.wake
        }
        wake?()
    }

    private func withinKeep(_ events: [TelemetryEvent], now: Int64) -> [TelemetryEvent] {
        let oldestKept = now - Int64(keepDays) * 86_400_000
        let kept = events.filter { $0.at >= oldestKept }
        if kept.count < events.count {
            let dropped = events.filter { $0.at < oldestKept }.compactMap(\.seq)
            let numbers = dropped.isEmpty ? "" : " (sequence numbers \(dropped.min() ?? 0) to \(dropped.max() ?? 0): the store sees them missing)"
            logger.error(
                "fleet outbox: dropped \(events.count - kept.count) event(s) older than \(keepDays) day(s) that the \(keepUntilStored ? "store" : "broker") never acknowledged (mqtt.outbox_days)\(numbers)"
            )
        }
        return kept
    }

    // MARK: - The publisher's side

    /// The events on disk not handed to the client since the last connection (or resend), oldest
    /// first, now marked sent.
    func takeUnsent() -> [TelemetryEvent] {
        state.withLock { state in
            let unsent = state.pending.filter { !state.sent.contains($0.id) && ($0.seq ?? 0) <= state.durableThrough }
            state.sent.formUnion(unsent.map(\.id))
            return unsent
        }
    }

    /// `ids` went in one message: one event, or a backlog batch.
    func published(_ ids: [String], messageID: Int32, backlog: Bool = false) {
        state.withLock { state in
            state.inFlight[messageID] = ids
            if backlog { state.backlogInFlight.insert(messageID) }
        }
    }

    /// The broker refused a message (its ACL). A backlog's events are to be sent again, on their
    /// own topics (true); an event refused on its own topic stays in flight until the next
    /// connection, since sending it again at once would be refused again.
    func refused(messageID: Int32) -> Bool {
        state.withLock { state in
            guard state.backlogInFlight.remove(messageID) != nil, let ids = state.inFlight.removeValue(forKey: messageID) else { return false }
            state.sent.subtract(ids)
            return true
        }
    }

    /// The client could not take `ids` (the connection just dropped): send them again later.
    func unsent(_ ids: [String]) {
        state.withLock { $0.sent.subtract(ids) }
    }

    /// PUBACK: the broker has it. Without `keepUntilStored` it leaves the outbox (and the next
    /// compaction); with it, it waits for the store, and is sent again if the store does not
    /// acknowledge it in time (`resendIfDue`).
    func acknowledged(messageID: Int32, now: ContinuousClock.Instant) {
        state.withLock { state in
            guard let ids = state.inFlight.removeValue(forKey: messageID) else { return }
            state.backlogInFlight.remove(messageID)
            if keepUntilStored {
                if state.pending.contains(where: { ids.contains($0.id) }) { state.resend.start(now: now) }
            } else {
                let carried = Set(ids)
                state.pending.removeAll { carried.contains($0.id) }
                state.sent.subtract(carried)
            }
        }
    }

    /// A new connection: everything unacknowledged goes again (same ids and sequence numbers).
    func connectionRestarted() {
        state.withLock { state in
            state.sent.removeAll()
            state.inFlight.removeAll()
            state.backlogInFlight.removeAll()
            state.resend.stop()
            state.connected = true
        }
    }

    func connectionLost() {
        state.withLock { $0.connected = false }
    }

    // MARK: - The store's acknowledgement

    /// What became of a `stored` payload.
    enum StoredOutcome: Equatable {
        /// Events up to `seq` left the outbox (`removed` of them were still in it).
        case accepted(seq: UInt64, removed: Int)
        /// Logged with this reason; nothing left the outbox.
        case ignored(String)
    }

    /// A payload on `<prefix>/<machine>/stored`: every event up to its `seq` leaves the outbox.
    /// A malformed one, or one beyond the last sequence number given, changes nothing.
    func storeAcknowledged(_ payload: [UInt8], now: ContinuousClock.Instant) -> StoredOutcome {
        guard let acknowledgement = try? JSONDecoder().decode(StoredAcknowledgement.self, from: Data(payload)) else {
            let text = String(decoding: payload.prefix(200), as: UTF8.self)
            return .ignored("not a {\"seq\": N} acknowledgement: '\(text)'")
        }
        let seq = acknowledgement.seq
        return state.withLock { state in
            guard seq <= state.lastSequence else {
                return .ignored(
                    "sequence \(seq) is beyond the last one this machine gave (\(state.lastSequence)); is the store's database another machine's, or was this machine's state reset?"
                )
            }
            let before = state.pending.count
            let covered = Set(state.pending.filter { ($0.seq ?? 0) <= seq }.map(\.id))
            state.pending.removeAll { covered.contains($0.id) }
            state.sent.subtract(covered)
            if seq > state.stored ?? 0 {
                state.resend.progressed(now: now, waiting: state.pending.contains { state.sent.contains($0.id) })
            }
            state.stored = seq
            return .accepted(seq: seq, removed: before - state.pending.count)
        }
    }

    /// With `keepUntilStored`: once the store has kept the publisher waiting past the backoff,
    /// what the broker has but the store does not acknowledge is sent again. True if anything is.
    func resendIfDue(now: ContinuousClock.Instant) -> Bool {
        guard keepUntilStored else { return false }
        return state.withLock { state in
            guard state.resend.isDue(now: now) else { return false }
            let waiting = Set(state.pending.map(\.id)).intersection(state.sent).subtracting(state.inFlight.values.joined())
            state.sent.subtract(waiting)
            state.resend.fired()
            return !waiting.isEmpty
        }
    }

    // MARK: - For vendctl status

    /// Whether the link to the broker is up.
    var isConnected: Bool { state.withLock { $0.connected } }

    var summary: Summary {
        state.withLock { state in
            let inFlight = Set(state.inFlight.values.joined())
            let delivered = state.pending.filter { state.sent.contains($0.id) && !inFlight.contains($0.id) }.count
            return Summary(
                count: state.pending.count, oldest: state.pending.first?.at, lastSequence: state.lastSequence, stored: state.stored,
                deliveredNotStored: keepUntilStored ? delivered : 0)
        }
    }

    struct Summary {
        let count: Int
        let oldest: Int64?
        let lastSequence: UInt64
        let stored: UInt64?
        /// Events the broker has (PUBACK) that the store has not acknowledged yet.
        let deliveredNotStored: Int
    }
}

/// When to send again what the broker has and the store does not acknowledge: 30 s after the
/// broker took it, doubling at each resend up to 10 minutes; back to 30 s when the store makes
/// progress. Its clock starts at the first PUBACK after a resend or a store's progress.
struct ResendBackoff {
    static let first = Duration.seconds(30)
    static let longest = Duration.seconds(600)

    private(set) var delay = first
    private(set) var deadline: ContinuousClock.Instant?

    mutating func start(now: ContinuousClock.Instant) {
        if deadline == nil { deadline = now + delay }
    }

    func isDue(now: ContinuousClock.Instant) -> Bool { deadline.map { now >= $0 } ?? false }

    mutating func fired() {
        delay = min(delay * 2, Self.longest)
        deadline = nil
    }

    /// The store acknowledged more: patience starts over for what still waits.
    mutating func progressed(now: ContinuousClock.Instant, waiting: Bool) {
        delay = Self.first
        deadline = waiting ? now + delay : nil
    }

    /// A reconnection resends everything anyway.
    mutating func stop() { deadline = nil }
}
