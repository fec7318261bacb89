#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// The real clocks, and one serial queue on which every scheduled action runs in deadline order.
public final class SystemTimekeeper: Timekeeper {
    private let queue = DispatchQueue(label: "vendd-timers")
    /// Timers scheduled and not cancelled; a timer whose id has gone does nothing when it fires.
    private let live = Mutex<(next: UInt64, ids: Set<UInt64>)>((0, []))

    public init() {}

    public var now: ContinuousClock.Instant { .now }

    public var wallClockMilliseconds: Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000 + Int64(time.tv_nsec) / 1_000_000
    }

    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> TimerID {
        let id = live.withLock { state in
            state.next += 1
            state.ids.insert(state.next)
            return state.next
        }
        // DispatchTime counts CLOCK_MONOTONIC and ContinuousClock CLOCK_BOOTTIME: only the delay
        // crosses between them.
        let delay = max(.zero, deadline - .now)
        let (seconds, attoseconds) = delay.components
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)),
                         execute: { [self] in
            guard live.withLock({ $0.ids.remove(id) }) != nil else { return }
            action()
        })
        return TimerID(value: id)
    }

    public func cancel(_ timer: TimerID) {
        _ = live.withLock { $0.ids.remove(timer.value) }
    }
}
