import Synchronization
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// The real clocks, and one thread that runs every scheduled action in deadline order: an
/// action scheduled late with a deadline already past still runs before any later-deadline
/// action waiting, so a busy machine keeps the order (a drop sensed before its window closed is
/// judged before the window's end).
public final class SystemTimekeeper: Timekeeper {
    private struct Scheduled {
        let id: UInt64
        let deadline: ContinuousClock.Instant
        let action: @Sendable () -> Void
    }

    /// Sorted by deadline, then by the order scheduled.
    private let timers = Mutex<(next: UInt64, queue: [Scheduled])>((0, []))
    private let waiter: Waiter

    /// `threadName` names the lane in `ps -L` (vendd runs its relay timers on a lane of their own);
    /// `neverWaits` marks it as a lane that must never wait for another (the relays').
    public init(threadName: String = "vendd-timers", neverWaits: Bool = false) {
        do {
            waiter = try Waiter()
        } catch {
            preconditionFailure("the timer thread's wake-up pipe: \(error)")
        }
        PosixThread.start(name: threadName, neverWaits: neverWaits) { [self] in run() }
    }

    public var now: ContinuousClock.Instant { .now }

    public var wallClockMilliseconds: Int64 { WallClock.milliseconds }

    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> TimerID {
        let (id, isFirst) = timers.withLock { state in
            state.next += 1
            let timer = Scheduled(id: state.next, deadline: deadline, action: action)
            let index = state.queue.firstIndex { $0.deadline > deadline } ?? state.queue.endIndex
            state.queue.insert(timer, at: index)
            return (state.next, index == 0)
        }
        if isFirst { waiter.wake() }
        return TimerID(value: id)
    }

    public func cancel(_ timer: TimerID) {
        timers.withLock { $0.queue.removeAll { $0.id == timer.value } }
    }

    private func run() {
        while true {
            let now = ContinuousClock.now
            let (due, next) = timers.withLock { state -> (Scheduled?, ContinuousClock.Instant?) in
                guard let first = state.queue.first else { return (nil, nil) }
                guard first.deadline <= now else { return (nil, first.deadline) }
                return (state.queue.removeFirst(), nil)
            }
            if let due {
                due.action()
                continue
            }
            _ = waiter.wait(for: nil, timeout: next.map { $0 - now } ?? .seconds(3_600))
        }
    }
}
