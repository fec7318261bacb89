import Synchronization

/// Time that moves only when a test says so. `advance(by:)` runs every action that falls due, in
/// deadline order, on the test's thread, with `now` set to each action's deadline as it runs.
public final class ManualTimekeeper: Timekeeper {
    private struct Scheduled {
        let id: UInt64
        let deadline: ContinuousClock.Instant
        let action: @Sendable () -> Void
    }

    private struct State {
        var now: ContinuousClock.Instant
        /// What `stepWallClock` added: the wall clock's steps, which monotonic time never sees.
        var wallClockStep: Int64 = 0
        var next: UInt64 = 0
        var scheduled: [Scheduled] = []
    }

    private let state: Mutex<State>
    private let origin: ContinuousClock.Instant
    private let wallClockOrigin: Int64

    /// Starts at an arbitrary monotonic instant and at `wallClockMilliseconds` on the wall clock
    /// (2026-11-21 09:00 UTC by default).
    public init(wallClockMilliseconds: Int64 = 1_795_770_000_000) {
        let start = ContinuousClock.now
        origin = start
        wallClockOrigin = wallClockMilliseconds
        state = Mutex(State(now: start))
    }

    public var now: ContinuousClock.Instant { state.withLock { $0.now } }

    public var wallClockMilliseconds: Int64 {
        let (elapsed, step) = state.withLock { ($0.now - origin, $0.wallClockStep) }
        let (seconds, attoseconds) = elapsed.components
        return wallClockOrigin + step + seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }

    /// The wall clock jumps by `milliseconds` (back when negative), as when NTP steps it; the
    /// monotonic clock and the scheduled actions do not move.
    public func stepWallClock(by milliseconds: Int64) {
        state.withLock { $0.wallClockStep += milliseconds }
    }

    /// Actions scheduled and not yet run.
    public var pendingCount: Int { state.withLock { $0.scheduled.count } }

    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> TimerID {
        state.withLock { state in
            state.next += 1
            state.scheduled.append(Scheduled(id: state.next, deadline: deadline, action: action))
            return TimerID(value: state.next)
        }
    }

    /// Inline: a test's timekeeper has no thread.
    public func perform<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result { body() }

    public func cancel(_ timer: TimerID) {
        state.withLock { $0.scheduled.removeAll { $0.id == timer.value } }
    }

    /// Moves time forward by `duration`, running what falls due on the way (including actions
    /// those actions schedule within the span).
    public func advance(by duration: Duration) {
        let target = now + duration
        while let due = takeNextDue(by: target) {
            due.action()
        }
        state.withLock { $0.now = max($0.now, target) }
    }

    private func takeNextDue(by target: ContinuousClock.Instant) -> Scheduled? {
        state.withLock { state in
            // Earliest deadline first; among equals, the first scheduled.
            guard
                let index = state.scheduled.indices.filter({ state.scheduled[$0].deadline <= target })
                    .min(by: { (state.scheduled[$0].deadline, state.scheduled[$0].id) < (state.scheduled[$1].deadline, state.scheduled[$1].id) })
            else { return nil }
            let due = state.scheduled.remove(at: index)
            state.now = max(state.now, due.deadline)
            return due
        }
    }
}
