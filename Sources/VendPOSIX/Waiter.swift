import CVendSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Sleeps until a descriptor is readable, a deadline passes, or another thread calls `wake()`:
/// `poll(2)` over the descriptors and a self-pipe, so a driver thread never spins and can be told
/// to stop or change its settings at once.
public final class Waiter: @unchecked Sendable {
    // @unchecked: the pipe's descriptors are fixed at init; `wake` only writes one byte.
    private let readEnd: Int32
    private let writeEnd: Int32

    public enum Outcome: Sendable, Equatable {
        case readable
        /// Hang-up or error on the descriptor: the device is gone.
        case hangUp
        case woken
        case timedOut
    }

    public init() throws(SystemError) {
        var ends: [Int32] = [0, 0]
        try systemCall("pipe") { pipe(&ends) }
        readEnd = ends[0]
        writeEnd = ends[1]
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
    }

    deinit {
        Glibc.close(readEnd)
        Glibc.close(writeEnd)
    }

    /// Makes the current or next `wait` return `.woken`. Any thread.
    public func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(writeEnd, &byte, 1)
    }

    /// Waits at most `timeout` for `descriptor` alone (no wake-up).
    public static func waitReadable(_ descriptor: Int32, timeout: Duration) -> Outcome {
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        do {
            try poll(&fds, timeout: timeout)
        } catch {
            return .hangUp
        }
        return outcome(fds[0].revents)
    }

    /// Waits at most `timeout` for `descriptor` (nil: only
    /// for a wake-up). A wake-up wins over readability, so stopping is never delayed by traffic.
    public func wait(for descriptor: Int32?, timeout: Duration) -> Outcome {
        do {
            guard let events = try wait(forAny: descriptor.map { [$0] } ?? [], timeout: timeout) else { return .woken }
            return Self.outcome(events.first ?? 0)
        } catch {
            return .hangUp
        }
    }

    /// Waits for any of `descriptors` to be readable or fail, at most `timeout` (nil: no limit).
    /// Nil when woken; otherwise each descriptor's `revents`, all 0 when the time ran out.
    public func wait(forAny descriptors: [Int32], timeout: Duration?) throws(SystemError) -> [Int16]? {
        var fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        return try wait(&fds, timeout: timeout) ? fds.map(\.revents) : nil
    }

    /// poll(2) over `fds` (each with the events it asks for) and the wake pipe, at most `timeout`.
    /// False when woken, true otherwise; either way each of `fds` has its `revents`.
    public func wait(_ fds: inout [pollfd], timeout: Duration?) throws(SystemError) -> Bool {
        var all = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)] + fds
        try Self.poll(&all, timeout: timeout)
        fds = Array(all.dropFirst())
        guard all[0].revents != 0 else { return true }
        var sink = [UInt8](repeating: 0, count: 64)
        while Glibc.read(readEnd, &sink, sink.count) > 0 {}
        return false
    }

    private static func outcome(_ events: Int16) -> Outcome {
        if events == 0 { return .timedOut }
        return events & Int16(POLLIN) != 0 ? .readable : .hangUp
    }

    /// ppoll(2) until something is ready or the time is up, to the nanosecond: a timer lane's
    /// deadline is not put off to the next whole millisecond, as poll(2) would. A signal restarts
    /// it with the time left.
    private static func poll(_ fds: inout [pollfd], timeout: Duration?) throws(SystemError) {
        let deadline = timeout.map { MonotonicClock.now + $0 }
        try systemCall("ppoll") {
            guard let deadline else { return cvendsystem_poll_precise(&fds, nfds_t(fds.count), nil) }
            var left = timespec(max(.zero, deadline - MonotonicClock.now))
            return cvendsystem_poll_precise(&fds, nfds_t(fds.count), &left)
        }
    }
}

extension timespec {
    /// A non-negative duration as seconds and nanoseconds.
    fileprivate init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    }
}
