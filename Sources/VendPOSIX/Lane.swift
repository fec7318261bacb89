import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A thread of its own that takes what is put to it in order, one item at a time. `put` only
/// appends under a short lock and wakes the thread: nothing runs on the caller's stack, so a
/// caller can never wait for the work it hands over, nor re-enter it. With a capacity, an item
/// put while the lane is full is refused (`put` says false) and counted (`takeRefusedCount`).
public final class Lane<Item: Sendable>: Sendable {
    private struct Queue {
        var items: [Item] = []
        var refused = 0
        var closing = false
    }

    public let name: String
    private let capacity: Int?
    private let neverWaits: Bool
    private let queue = Mutex(Queue())
    private let work = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// The lane's thread, once it runs (pthread_t is an integer on Linux).
    private let thread = Atomic<UInt>(0)
    private let started = Atomic(false)

    /// `neverWaits`: the lane's thread must never wait for another (`PosixThread.markNeverWaits`).
    public init(name: String, capacity: Int? = nil, neverWaits: Bool = false) {
        self.name = name
        self.capacity = capacity
        self.neverWaits = neverWaits
    }

    /// Starts the thread; `handle` gets every item, in the order put, on that thread.
    public func start(_ handle: @escaping @Sendable (Item) -> Void) {
        started.store(true, ordering: .releasing)
        PosixThread.start(name: name, neverWaits: neverWaits) { [self] in
            thread.store(UInt(pthread_self()), ordering: .releasing)
            while true {
                work.wait()
                let (batch, closing) = queue.withLock { queue in
                    defer { queue.items.removeAll(keepingCapacity: true) }
                    return (queue.items, queue.closing)
                }
                for item in batch { handle(item) }
                if closing, queue.withLock({ $0.items.isEmpty }) { break }
            }
            finished.signal()
        }
    }

    /// Appends `item`; false (and counted) when the lane is full or closed.
    @discardableResult
    public func put(_ item: Item) -> Bool {
        let taken = queue.withLock { queue in
            guard !queue.closing, capacity.map({ queue.items.count < $0 }) ?? true else {
                queue.refused += 1
                return false
            }
            queue.items.append(item)
            return true
        }
        if taken { work.signal() }
        return taken
    }

    /// How many items were refused since the last call.
    public func takeRefusedCount() -> Int {
        queue.withLock { queue in
            defer { queue.refused = 0 }
            return queue.refused
        }
    }

    /// True on the lane's own thread (where waiting for the lane would wait for itself).
    public var isCurrentThread: Bool {
        let lane = thread.load(ordering: .acquiring)
        return lane != 0 && pthread_equal(pthread_t(lane), pthread_self()) != 0
    }

    /// Refuses new items, lets the thread finish those already put — then `last`, put in the same
    /// step, so that nothing comes after it — and waits for it (at most `limit`). False when it
    /// did not finish in time.
    @discardableResult
    public func close(within limit: Duration = .seconds(5), last: Item? = nil) -> Bool {
        let alreadyClosing = queue.withLock { queue in
            defer { queue.closing = true }
            if !queue.closing, let last { queue.items.append(last) }
            return queue.closing
        }
        guard !alreadyClosing, started.load(ordering: .acquiring) else { return true }
        work.signal()
        let nanoseconds = limit.components.seconds * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000
        return finished.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success
    }
}
