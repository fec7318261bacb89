/// Time for everything in vendd that waits or stamps: the dispenser's pulse and drop window, the
/// input debounce, the ccTalk driver's polling and reconnect backoff, the vend-timeout tick and
/// the controller's records. The daemon uses `SystemTimekeeper`; tests use `ManualTimekeeper`
/// and advance it, so nothing in a unit test sleeps for real.
public protocol Timekeeper: Sendable {
    /// Monotonic time, for deadlines and durations.
    var now: ContinuousClock.Instant { get }
    /// Wall-clock time in milliseconds since the Unix epoch, for what is recorded and shown.
    var wallClockMilliseconds: Int64 { get }
    /// Runs `action` once, as soon as `deadline` has passed. Actions run one at a time, in
    /// deadline order, never on the caller's stack.
    @discardableResult
    func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> TimerID
    /// The action will not run (a no-op if it ran already).
    func cancel(_ timer: TimerID)
    /// Runs `body` on the thread that runs the actions, now, and returns what it returns; the
    /// caller waits. What must not be delayed by an ordinary thread's preemption (a relay's
    /// power-on and the instant its pulse is timed from) runs at that thread's priority. Inline
    /// when called from that thread, and by a timekeeper without a thread of its own.
    func perform<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result
}

/// Names one scheduled action, to cancel it.
public struct TimerID: Hashable, Sendable {
    let value: UInt64
}

extension Timekeeper {
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> TimerID {
        schedule(at: now + delay, action)
    }

    /// Runs `action` every `interval` until it returns false.
    public func repeatEvery(_ interval: Duration, _ action: @escaping @Sendable () -> Bool) {
        schedule(after: interval) {
            if action() { self.repeatEvery(interval, action) }
        }
    }
}
