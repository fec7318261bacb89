import Dispatch
import Synchronization

/// A value under a lock that other threads can wait on until it satisfies them: each change wakes
/// the waiters, which look again, so a waiting thread sleeps instead of polling it.
public final class Watched<Value: Sendable>: Sendable {
    private struct Contents {
        var value: Value
        var waiters: [DispatchSemaphore] = []
    }

    private let contents: Mutex<Contents>

    public init(_ value: sending Value) { contents = Mutex(Contents(value: value)) }

    /// Reads or changes the value under the lock, then wakes every waiter to look again.
    @discardableResult
    public func withValue<T>(_ body: (inout Value) -> T) -> T {
        let (result, waiters) = contents.withLock { contents in
            let result = body(&contents.value)
            defer { contents.waiters.removeAll() }
            return (result, contents.waiters)
        }
        for waiter in waiters { waiter.signal() }
        return result
    }

    /// Returns true as soon as `satisfied` holds for the value, false if it still does not at
    /// `deadline`. `satisfied` runs under the lock, once now and once after each change.
    public func wait(until satisfied: (Value) -> Bool, deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let woken = DispatchSemaphore(value: 0)
            let done = contents.withLock { contents in
                if satisfied(contents.value) { return true }
                contents.waiters.append(woken)
                return false
            }
            if done { return true }
            let left = deadline - ContinuousClock.now
            guard left > .zero, woken.wait(timeout: .now() + .nanoseconds(Int(left.wholeNanoseconds))) == .success else {
                return contents.withLock { contents in
                    contents.waiters.removeAll { $0 === woken }
                    return satisfied(contents.value)
                }
            }
        }
    }
}

extension Duration {
    fileprivate var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
