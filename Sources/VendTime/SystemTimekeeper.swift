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
    private let queue: Queue

    /// Why the thread runs without the real-time priority it was given; nil when it has it or
    /// was given none.
    public let realTimeRefusal: SystemError?

    /// `threadName` names the lane in `ps -L` (vendd runs its relay timers on a lane of their own);
    /// `neverWaits` marks it as a lane that must never wait for another (the relays');
    /// `realTimePriority` schedules it SCHED_FIFO (`PosixThread.start`).
    public init(threadName: String = "vendd-timers", neverWaits: Bool = false, realTimePriority: Int32? = nil) {
        let queue = Queue()
        self.queue = queue
        realTimeRefusal = PosixThread.start(name: threadName, neverWaits: neverWaits, realTimePriority: realTimePriority) { queue.run() }
    }

    public var now: ContinuousClock.Instant { .now }

    public var wallClockMilliseconds: Int64 { WallClock.milliseconds }

    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> TimerID {
        TimerID(value: queue.schedule(at: deadline, action))
    }

    public func cancel(_ timer: TimerID) { queue.cancel(timer.value) }

    public func perform<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        if queue.isRunningHere { return body() }
        let done: Waiter
        do {
            done = try Waiter()
        } catch {
            preconditionFailure("a wake-up pipe to wait for the timer thread: \(error)")
        }
        let result = Mutex<Result?>(nil)
        // Due now: after any action already due, before every later one.
        _ = queue.schedule(at: .now) {
            result.withLock { $0 = body() }
            done.wake()
        }
        while true {
            if let value = result.withLock({ $0 }) { return value }
            _ = done.wait(for: nil, timeout: .seconds(3_600))
        }
    }

    /// The actions waiting, and the thread's loop that runs them.
    private final class Queue: Sendable {
        private struct Scheduled {
            let id: UInt64
            let deadline: ContinuousClock.Instant
            let action: @Sendable () -> Void
        }

        /// Sorted by deadline, then by the order scheduled.
        private let timers = Mutex<(next: UInt64, queue: [Scheduled])>((0, []))
        private let waiter: Waiter
        /// The thread running `run`, once it has started.
        private let runner = Mutex<pthread_t?>(nil)

        var isRunningHere: Bool { runner.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false } }

        init() {
            do {
                waiter = try Waiter()
            } catch {
                preconditionFailure("the timer thread's wake-up pipe: \(error)")
            }
        }

        func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> UInt64 {
            let (id, isFirst) = timers.withLock { state in
                state.next += 1
                let timer = Scheduled(id: state.next, deadline: deadline, action: action)
                let index = state.queue.firstIndex { $0.deadline > deadline } ?? state.queue.endIndex
                state.queue.insert(timer, at: index)
                return (state.next, index == 0)
            }
            if isFirst { waiter.wake() }
            return id
        }

        func cancel(_ id: UInt64) {
            timers.withLock { $0.queue.removeAll { $0.id == id } }
        }

        func run() {
            runner.withLock { $0 = pthread_self() }
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
}
