import FoundationEssentials
import Logging
import Synchronization
import VendTelemetry
import VendingCore

/// The events waiting for the broker's acknowledgement. Durability is not kept here: each event
/// is written in the journal record of the input that caused it (`JournalEntry.outbox`), and at
/// compaction the ones still unacknowledged go to `outbox.json` before the journal is emptied.
/// This object is the in-memory view both sides share: the controller adds under its lock (never
/// waiting for the network), the MQTT thread takes, marks sent and removes on PUBACK.
final class Outbox: Sendable {
    static let fileName = "outbox.json"

    let machine: String
    let currency: Currency
    let keepDays: Int
    /// False when `publish:` leaves out `events`: nothing is kept, only the retained topics go.
    let keepsEvents: Bool
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        /// Oldest first.
        var pending: [TelemetryEvent] = []
        /// Ids handed to the client since the last (re)connection.
        var sent: Set<String> = []
        /// Message id → event id, until PUBACK.
        var inFlight: [Int32: String] = [:]
        var wake: (@Sendable () -> Void)?
        var connected = false
    }

    init(machine: String, currency: Currency, keepDays: Int, keepsEvents: Bool = true, logger: Logger) {
        self.machine = machine
        self.currency = currency
        self.keepDays = keepDays
        self.keepsEvents = keepsEvents
        self.logger = logger
    }

    /// The telemetry of an input's effects, each with its id: journal them with the input.
    func events(from effects: [Effect], at: Instant) -> [TelemetryEvent] {
        guard keepsEvents else { return [] }
        return effects.events.compactMap { TelemetryEvent($0, machine: machine, currency: currency, at: at) }
    }

    func fault(_ reason: String, at: Instant) -> TelemetryEvent {
        var event = TelemetryEvent(
            id: UUID().uuidString.lowercased(), machine: machine, at: at.millisecondsSinceEpoch,
            type: .fault, currency: currency.code)
        event.reason = reason
        return event
    }

    /// Called once the events are durable (or, for what physically happened during a storage
    /// fault, applied): the publisher is woken, nothing waits for it.
    func add(_ events: [TelemetryEvent]) {
        guard keepsEvents, !events.isEmpty else { return }
        let wake = state.withLock { state in
            state.pending += events
            return state.wake
        }
        wake?()
    }

    func onAdd(_ wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.wake = wake }
    }

    // MARK: - Restart and compaction

    /// Start-up: the events saved at the last compaction plus those journaled after it, each once,
    /// minus those older than `keepDays` (logged). Throws when `outbox.json` cannot be decoded.
    func restore(saved: [UInt8]?, journaled: [TelemetryEvent], now: Int64) throws {
        var events = try saved.map { try JSONDecoder().decode([TelemetryEvent].self, from: Data($0)) } ?? []
        var seen = Set(events.map(\.id))
        for event in journaled where seen.insert(event.id).inserted { events.append(event) }
        let kept = withinKeep(events, now: now)
        state.withLock { $0.pending = kept }
        if !kept.isEmpty {
            logger.notice("fleet outbox: \(kept.count) event(s) not yet acknowledged by the broker; they are sent when it is reached")
        }
    }

    /// What `outbox.json` holds at a compaction: every unacknowledged event still within `keepDays`.
    func encoded(now: Int64) throws -> [UInt8] {
        let kept = state.withLock { state in
            state.pending = withinKeep(state.pending, now: now)
            return state.pending
        }
        return Array(try JSONEncoder().encode(kept))
    }

    private func withinKeep(_ events: [TelemetryEvent], now: Int64) -> [TelemetryEvent] {
        let oldestKept = now - Int64(keepDays) * 86_400_000
        let kept = events.filter { $0.at >= oldestKept }
        if kept.count < events.count {
            logger.error(
                "fleet outbox: dropped \(events.count - kept.count) event(s) older than \(keepDays) day(s) that the broker never acknowledged (mqtt.outbox_days)"
            )
        }
        return kept
    }

    // MARK: - The publisher's side

    /// The events not handed to the client since the last connection, oldest first, now marked sent.
    func takeUnsent() -> [TelemetryEvent] {
        state.withLock { state in
            let unsent = state.pending.filter { !state.sent.contains($0.id) }
            state.sent.formUnion(unsent.map(\.id))
            return unsent
        }
    }

    func published(_ id: String, messageID: Int32) {
        state.withLock { $0.inFlight[messageID] = id }
    }

    /// The client could not take `id` (the connection just dropped): send it again later.
    func unsent(_ id: String) {
        _ = state.withLock { $0.sent.remove(id) }
    }

    /// PUBACK: the broker has it; it leaves the outbox (and is left out of the next compaction).
    func acknowledged(messageID: Int32) {
        state.withLock { state in
            guard let id = state.inFlight.removeValue(forKey: messageID) else { return }
            state.pending.removeAll { $0.id == id }
            state.sent.remove(id)
        }
    }

    /// A new connection: everything unacknowledged goes again (same ids; consumers drop repeats).
    func connectionRestarted() {
        state.withLock { state in
            state.sent.removeAll()
            state.inFlight.removeAll()
            state.connected = true
        }
    }

    func connectionLost() {
        state.withLock { $0.connected = false }
    }

    /// Whether the link to the broker is up, for `vendctl status`.
    var isConnected: Bool { state.withLock { $0.connected } }

    /// For `vendctl status`.
    var summary: (count: Int, oldest: Int64?) {
        state.withLock { ($0.pending.count, $0.pending.first?.at) }
    }
}
