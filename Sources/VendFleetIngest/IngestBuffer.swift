import Synchronization
import VendFleetStore
import VendPOSIX

/// What arrived and is not committed yet, between libmosquitto's thread (which only appends)
/// and the writer. Bounded: past `capacity` events new ones are dropped and counted, since a
/// machine sends again whatever its `stored` acknowledgement does not cover.
final class IngestBuffer: Sendable {
    struct Batch {
        var events: [IncomingEvent] = []
        var retained: [RetainedUpdate] = []
        var isEmpty: Bool { events.isEmpty && retained.isEmpty }
    }

    private struct Pending {
        var batch = Batch()
        /// When the oldest waiting message arrived (monotonic ns), for the batch window.
        var since: UInt64 = 0
        var dropped = 0
    }

    private let pending = Mutex(Pending())
    private let waiter: Waiter
    let capacity: Int
    let batchSize: Int

    init(batchSize: Int, capacity: Int) throws {
        waiter = try Waiter()
        self.batchSize = batchSize
        self.capacity = capacity
    }

    /// One message's events (one, or a backlog's).
    func add(_ events: [IncomingEvent]) {
        guard !events.isEmpty else { return }
        let wake = pending.withLock { state -> Bool in
            let room = max(0, capacity - state.batch.events.count)
            state.dropped += max(0, events.count - room)
            guard room > 0 else { return false }
            let wasEmpty = state.batch.isEmpty
            if wasEmpty { state.since = MonotonicClock.nanoseconds }
            let before = state.batch.events.count
            state.batch.events += events.prefix(room)
            return wasEmpty || (before < batchSize && state.batch.events.count >= batchSize)
        }
        if wake { waiter.wake() }
    }

    func add(_ update: RetainedUpdate) {
        let wake = pending.withLock { state -> Bool in
            let wasEmpty = state.batch.isEmpty
            if wasEmpty { state.since = MonotonicClock.nanoseconds }
            state.batch.retained.append(update)
            return wasEmpty
        }
        if wake { waiter.wake() }
    }

    /// Up to `batchSize` events once that many wait or the oldest has waited `window`; an empty
    /// batch after `idle` with nothing waiting. Also returns how many were dropped since the last call.
    func next(window: Duration, idle: Duration) -> (Batch, dropped: Int) {
        while true {
            let (taken, wait) = pending.withLock { state -> ((Batch, Int)?, Duration) in
                if state.batch.isEmpty { return (nil, idle) }
                let waited = Duration.nanoseconds(Int64(MonotonicClock.nanoseconds - state.since))
                guard state.batch.events.count >= batchSize || waited >= window else { return (nil, window - waited) }
                var batch = Batch()
                if state.batch.events.count > batchSize {
                    batch.events = Array(state.batch.events.prefix(batchSize))
                    state.batch.events.removeFirst(batchSize)
                } else {
                    batch.events = state.batch.events
                    state.batch.events = []
                }
                batch.retained = state.batch.retained
                state.batch.retained = []
                state.since = MonotonicClock.nanoseconds
                defer { state.dropped = 0 }
                return ((batch, state.dropped), .zero)
            }
            if let taken { return taken }
            if waiter.wait(for: nil, timeout: wait) == .timedOut, wait == idle { return (Batch(), 0) }
        }
    }

    func wake() { waiter.wake() }
}
