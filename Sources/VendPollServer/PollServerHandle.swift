import Dispatch
import Synchronization
import VendPOSIX

/// What other threads may do to a `PollServer`: wake its loop (something was left for it), and
/// stop it and wait for its end.
public final class PollServerHandle: Sendable {
    let waiter: Waiter
    private let stopping = Atomic(false)
    private let finished = DispatchSemaphore(value: 0)

    public init() throws(SystemError) {
        waiter = try Waiter()
    }

    /// The loop's next turn starts at once. Any thread.
    public func wake() {
        waiter.wake()
    }

    /// Asks the loop to hang up every client and end; returns once it has (after `run`).
    public func stop() {
        stopping.store(true, ordering: .releasing)
        waiter.wake()
        finished.wait()
    }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    func ended() {
        finished.signal()
    }
}
