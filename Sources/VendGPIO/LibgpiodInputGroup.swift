import CGPIOShim
import Dispatch
import Glibc
import Synchronization
import VendHardware
import VendPOSIX

/// Input lines requested for both-edge events. A thread of its own sleeps in poll(2) on the
/// request's event descriptors, so reading never blocks the daemon's tasks and never spins; each
/// wake-up drains every queued edge and delivers them together, so a burst is judged whole.
final class LibgpiodInputGroup: GPIOInputGroup, @unchecked Sendable {
    let isDebouncedByBackend = vgpio_kernel_debounce() == 1
    /// libgpiod objects may be used by one thread at a time: the reader and `currentValues`
    /// take turns. Nil once released.
    private let request: Mutex<OpaquePointer?>
    private let lineCount: Int
    private let device: String
    /// Wakes the reader out of poll(2) for `release`.
    private let waiter: Waiter
    private let readerFinished = DispatchSemaphore(value: 0)
    private let fds: [Int32]
    private let started = Mutex(false)

    init(request: sending OpaquePointer, device: String, lineCount: Int) throws(GPIOError) {
        do {
            waiter = try Waiter()
        } catch {
            vgpio_release(request)
            throw .ioFailure("cannot create the GPIO reader's wake-up pipe: \(error.reason)", origin: nil)
        }
        fds = (0..<vgpio_request_fd_count(request)).map { vgpio_request_fd(request, $0) }
        self.request = Mutex(request)
        self.lineCount = lineCount
        self.device = device
    }

    func start(deliver: @escaping @Sendable ([LineEvent]) -> Void, lost: @escaping @Sendable () -> Void) {
        guard
            !started.withLock({ started in
                defer { started = true }
                return started
            })
        else { return }
        // Edges are read and stamped here: it hands them over (`send`), never waits for the machine.
        PosixThread.start(name: "vendd-gpio", neverWaits: true) { [self] in readEdges(deliver: deliver, lost: lost) }
    }

    func currentValues() throws(GPIOError) -> [Bool] {
        let values = request.withLock { request -> [Bool]? in
            guard let request else { return nil }
            return Self.levels(count: lineCount) { vgpio_get_values(request, $0) }
        }
        guard let values else { throw .ioFailure("cannot read input levels on \(device): \(SystemError.text(errno))", origin: nil) }
        return values
    }

    /// The `count` levels `read` fills in (returning 0), or nil if it fails. The buffer is read
    /// only after `read` has run: a tuple `(values, read(&values))` would copy it before, and
    /// every level would read inactive (the HIL's motor scenarios found every home switch away).
    static func levels(count: Int, read: (UnsafeMutablePointer<Int32>) -> Int32) -> [Bool]? {
        var values = [Int32](repeating: 0, count: max(count, 1))
        let status = values.withUnsafeMutableBufferPointer { buffer in
            // A buffer of at least one element always has an address.
            buffer.baseAddress.map(read) ?? -1
        }
        guard status == 0 else { return nil }
        return values.prefix(count).map { $0 != 0 }
    }

    func release() {
        // As an address: Swift 6.0's region checker refuses to return the pointer itself.
        let address = request.withLock { request -> Int in
            defer { request = nil }
            return Int(bitPattern: request)
        }
        guard let released = OpaquePointer(bitPattern: address) else { return }
        if started.withLock({ $0 }) {
            waiter.wake()
            readerFinished.wait()
        }
        vgpio_release(released)
    }

    private func readEdges(deliver: @Sendable ([LineEvent]) -> Void, lost: @Sendable () -> Void) {
        defer { readerFinished.signal() }
        var edges = [vgpio_edge](repeating: vgpio_edge(), count: 64)
        while true {
            let polled: [Int16]
            do {
                guard let events = try waiter.wait(forAny: fds, timeout: nil) else { return }
                polled = events
            } catch {
                return lost()
            }
            if polled.contains(where: { $0 & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 }) {
                return lost()
            }
            var batch: [LineEvent] = []
            for which in fds.indices where polled[which] & Int16(POLLIN) != 0 {
                let count = request.withLock { request -> Int32 in
                    guard let request else { return 0 }
                    return vgpio_read_edges(request, which, &edges, edges.count)
                }
                for edge in edges.prefix(Int(max(count, 0))) {
                    batch.append(
                        LineEvent(
                            index: Int(edge.index), isActive: edge.is_active != 0,
                            at: MonotonicClock.instant(ofNanoseconds: edge.timestamp_ns)))
                }
            }
            // Several chips' descriptors are read in turn: put their edges back in time order.
            if !batch.isEmpty { deliver(batch.sorted { $0.at < $1.at }) }
        }
    }
}
