import CVendSystem
import VendPOSIX
import VendTime

#if canImport(Glibc)
    import Glibc
#endif

/// A server on one thread in poll(2) for clients that may be hostile or broken: it owns the
/// poll set, accepting (with a limit), every connection's buffers and deadlines, and hanging
/// up; its delegate owns the protocol (framing, parsing, answers). vendd's control socket and
/// vendd-display's HTTP server are the two delegates.
///
/// What a client cannot do: take more than `connections` places (the longest-idle evictable
/// one is hung up for a newcomer, or the newcomer is refused with the delegate's words), end
/// the accept loop (EMFILE and the like: said once a minute, a place made, a spare descriptor
/// spent to refuse the next client, else a pause), hold a place with half a request, however
/// slowly it drips (`requestTimeout` from its first byte), sit idle (`idleTimeout`), have more
/// than a request's worth buffered (`inputBytes`; the rest waits in the kernel), get answers it
/// does not read (one answer waits at a time; output that no byte leaves for `writeTimeout` is
/// hung up), or fall behind a stream without end (`streamOutputBytes`).
///
/// Time is the injected `Timekeeper`'s: every deadline is a timer on it that wakes the loop, so
/// a test advances a manual clock instead of sleeping.
public final class PollServer {
    public struct Limits: Sendable {
        /// Connections at once.
        public var connections: Int
        /// Reading with nothing buffered and nothing to write, this long since the last byte.
        public var idleTimeout: Duration
        /// From a request's first byte to its end.
        public var requestTimeout: Duration
        /// Output waiting this long without a byte taken: the client is gone or not reading.
        public var writeTimeout: Duration
        /// After a closing connection's last byte, how long its input is drained.
        public var lingerTimeout: Duration
        /// A connection this new is not hung up to make room: it has not had time to ask.
        public var evictionGrace: Duration
        /// Input buffered for a connection, at least a whole request.
        public var inputBytes: Int
        /// A streaming connection this far behind is hung up (nil: no limit).
        public var streamOutputBytes: Int?

        public init(
            connections: Int, idleTimeout: Duration, requestTimeout: Duration, writeTimeout: Duration, lingerTimeout: Duration,
            evictionGrace: Duration, inputBytes: Int, streamOutputBytes: Int? = nil
        ) {
            self.connections = connections
            self.idleTimeout = idleTimeout
            self.requestTimeout = requestTimeout
            self.writeTimeout = writeTimeout
            self.lingerTimeout = lingerTimeout
            self.evictionGrace = evictionGrace
            self.inputBytes = inputBytes
            self.streamOutputBytes = streamOutputBytes
        }
    }

    /// Why a client was refused at the door.
    public enum Refusal: Sendable, Equatable {
        /// Every place is taken by a client that may not be hung up for another.
        case full(connections: Int)
        /// The process is out of descriptors or memory.
        case outOfResources(SystemError)
    }

    public enum Event: Sendable, Equatable {
        case refused(Refusal)
        /// A client was hung up to make room for a newcomer.
        case evicted
        /// Accepting failed (EMFILE and the like); told at most once a minute.
        case cannotAccept(SystemError)
        /// A stream's output passed `streamOutputBytes`: hung up.
        case fellBehind(bytes: Int)
        /// poll(2) itself failed: serving again in a second.
        case pollFailed(SystemError)
    }

    public let limits: Limits
    public let timekeeper: any Timekeeper
    private let listener: Int32
    private let handle: PollServerHandle
    private let delegate: any PollServerDelegate
    private var byID: [Int: PollConnection] = [:]
    private var lastID = 0
    /// Open while descriptors are plentiful; spent to refuse a client when they run out.
    private var spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
    private var acceptPausedUntil: ContinuousClock.Instant?
    private var lastAcceptComplaint: ContinuousClock.Instant?
    private var wakeTimer: (deadline: ContinuousClock.Instant, id: TimerID)?
    private var chunk = [UInt8](repeating: 0, count: 16_384)

    /// Serves clients of `listener`, a listening socket set non-blocking (its owner keeps it
    /// open while the server runs). Other threads reach the loop through `handle`.
    public init(listener: Int32, limits: Limits, timekeeper: any Timekeeper, handle: PollServerHandle, delegate: any PollServerDelegate) {
        self.listener = listener
        self.limits = limits
        self.timekeeper = timekeeper
        self.handle = handle
        self.delegate = delegate
    }

    public var connections: Dictionary<Int, PollConnection>.Values { byID.values }

    public func connection(_ id: Int) -> PollConnection? { byID[id] }

    /// Serves until the handle is told to stop, then hangs up every client.
    public func run() {
        while !handle.isStopping { turn() }
        for connection in Array(byID.values) { hangUp(connection) }
        if spare >= 0 { Glibc.close(spare) }
        if let wakeTimer { timekeeper.cancel(wakeTimer.id) }
        handle.ended()
    }

    /// One turn: waits for a client, a wake-up or the next deadline (not at all unless
    /// `blocking`), then accepts, reads, lets the delegate answer, ends what is due and writes.
    public func turn(blocking: Bool = true) {
        var now = timekeeper.now
        if let paused = acceptPausedUntil, now >= paused { acceptPausedUntil = nil }
        let order = Array(byID.values)
        var fds = [pollfd(fd: listener, events: acceptPausedUntil == nil ? Int16(POLLIN) : 0, revents: 0)]
        fds += order.map(pollEntry)
        let next = nextDeadline()
        scheduleWake(at: next)
        // Read after scheduling: a clock that passed the deadline before the timer was set
        // would never run it.
        let due = order.contains(where: \.needsParse) || next.map { $0 <= timekeeper.now } ?? false
        do {
            // Woken or not, every descriptor's `revents` is filled in.
            _ = try handle.waiter.wait(&fds, timeout: blocking && !due ? nil : .zero)
        } catch {
            delegate.report(.pollFailed(error), on: self)
            usleep(1_000_000)
            return
        }
        now = timekeeper.now
        delegate.collect(on: self)
        if fds[0].revents & Int16(POLLIN) != 0 { acceptClients() }
        for (index, connection) in order.enumerated() where fds[index + 1].revents != 0 && byID[connection.id] === connection {
            let revents = fds[index + 1].revents
            if revents & Int16(POLLNVAL) != 0 {
                hangUp(connection)
            } else if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                read(connection, hungUp: revents & Int16(POLLHUP | POLLERR) != 0, at: now)
            }
        }
        for connection in Array(byID.values) where connection.needsParse || (connection.phase == .reading && connection.inputEnded) {
            parse(connection)
        }
        expire(at: now)
        for connection in Array(byID.values) { write(connection, at: now) }
    }

    // MARK: Accepting

    private func acceptClients() {
        while true {
            // Each client's own instant: a long accept loop would otherwise judge ages by its start.
            let now = timekeeper.now
            do {
                admit(try acceptOne(), at: now)
            } catch  where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
                return
            } catch  where error.errno == ECONNABORTED {
                continue
            } catch {
                guard outOfResources(error, at: now) else { return }
            }
        }
    }

    /// The next waiting client, non-blocking and close-on-exec.
    private func acceptOne() throws(SystemError) -> Int32 {
        try systemCall("accept4") { cvendsystem_accept_nonblocking(listener) }
    }

    /// EMFILE, ENFILE, ENOMEM and the like: say so (once a minute) and make room, so that the
    /// clients waiting in the kernel's queue are still answered: the longest-idle client is hung
    /// up, or the spare descriptor refuses the next one. True when accepting may go on; false
    /// when no client waits (accept4 fails with EMFILE whether one waits or not) or to listen
    /// again shortly.
    private func outOfResources(_ error: SystemError, at now: ContinuousClock.Instant) -> Bool {
        if lastAcceptComplaint.map({ now - $0 >= .seconds(60) }) ?? true {
            delegate.report(.cannotAccept(error), on: self)
            lastAcceptComplaint = now
        }
        if let idlest = evictable(at: now) {
            hangUp(idlest)
            delegate.report(.evicted, on: self)
            return true
        }
        if spare >= 0 {
            Glibc.close(spare)
            let client = try? acceptOne()
            if let client { refuse(client, .outOfResources(error)) }
            spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
            if spare >= 0 { return client != nil }
        }
        acceptPausedUntil = now + .milliseconds(250)
        return false
    }

    /// The client to hang up for a newcomer: the longest idle of those that may be and have
    /// been connected long enough to have sent their request.
    private func evictable(at now: ContinuousClock.Instant) -> PollConnection? {
        byID.values.filter { $0.isEvictable && now - $0.connectedAt >= limits.evictionGrace }.min { $0.lastActivity < $1.lastActivity }
    }

    private func admit(_ descriptor: Int32, at now: ContinuousClock.Instant) {
        if byID.count >= limits.connections {
            guard let idlest = evictable(at: now) else { return refuse(descriptor, .full(connections: byID.count)) }
            hangUp(idlest)
            delegate.report(.evicted, on: self)
        }
        lastID += 1
        let connection = PollConnection(id: lastID, descriptor: descriptor, at: now, timekeeper: timekeeper)
        byID[lastID] = connection
        delegate.opened(connection, on: self)
    }

    private func refuse(_ descriptor: Int32, _ reason: Refusal) {
        // One best-effort write: a new socket's buffer takes it whole, or the client loses it.
        let words = delegate.refusal(reason, on: self)
        _ = words.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        Glibc.close(descriptor)
        delegate.report(.refused(reason), on: self)
    }

    // MARK: Reading

    private func pollEntry(_ connection: PollConnection) -> pollfd {
        var events: Int16 = 0
        switch connection.phase {
        // A request's worth is buffered: the rest waits in the kernel until it is answered.
        case .reading, .busy: if connection.input.count < limits.inputBytes { events |= Int16(POLLIN) }
        // Read only to be dropped.
        case .streaming, .closing: events |= Int16(POLLIN)
        }
        if connection.inputEnded { events &= ~Int16(POLLIN) }
        if connection.hasOutput { events |= Int16(POLLOUT) }
        // Nothing to wait for on it: left out, or its hang-up would be reported without end.
        return pollfd(fd: events == 0 && connection.inputEnded ? -1 : connection.descriptor, events: events, revents: 0)
    }

    /// Reads what the kernel has, up to `inputBytes` buffered: past it only for a client that
    /// hung up (poll says so without end until its end of stream is read).
    private func read(_ connection: PollConnection, hungUp: Bool, at now: ContinuousClock.Instant) {
        var pastTheLimit = hungUp
        while !connection.inputEnded {
            let buffering = connection.phase == .reading || connection.phase == .busy
            let room = buffering ? limits.inputBytes - connection.input.count : chunk.count
            guard room > 0 || pastTheLimit else { return }
            if room <= 0 { pastTheLimit = false }
            let size = room > 0 ? min(room, chunk.count) : chunk.count
            let count = chunk.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, size, Int32(MSG_DONTWAIT)) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { hangUp(connection) }
                return
            }
            if count == 0 { return endOfInput(connection) }
            connection.received(chunk[..<count], at: now)
        }
    }

    private func endOfInput(_ connection: PollConnection) {
        connection.endOfInput()
        switch connection.phase {
        case .streaming: hangUp(connection)
        case .closing where !connection.hasOutput: hangUp(connection)
        // Reading: its last request is still answered; busy: its answer is still written.
        case .reading, .busy, .closing: break
        }
    }

    private func parse(_ connection: PollConnection) {
        guard connection.phase == .reading else { return }
        if connection.hasOutput {
            // One answer at a time; a client gone meanwhile gets no more.
            if connection.inputEnded { connection.close() }
            return
        }
        connection.needsParse = false
        if !connection.input.isEmpty { delegate.received(connection, on: self) }
        if connection.phase == .reading && connection.inputEnded { connection.close() }
    }

    // MARK: Time

    private func deadline(of connection: PollConnection) -> ContinuousClock.Instant? {
        var deadlines = [connection.alarm, connection.stalledSince.map { $0 + limits.writeTimeout }]
        switch connection.phase {
        // With an answer waiting, the client is slow to read, not to ask: `writeTimeout`'s.
        case .reading where connection.hasOutput, .busy, .streaming:
            break
        case .reading:
            deadlines.append(connection.requestStartedAt.map { $0 + limits.requestTimeout } ?? connection.lastActivity + limits.idleTimeout)
        case .closing:
            deadlines.append(connection.lingerUntil)
        }
        return deadlines.compactMap { $0 }.min()
    }

    private func nextDeadline() -> ContinuousClock.Instant? {
        (byID.values.compactMap(deadline) + [acceptPausedUntil].compactMap { $0 }).min()
    }

    /// A timer on the timekeeper wakes the loop at `deadline`: the one way time reaches it.
    private func scheduleWake(at deadline: ContinuousClock.Instant?) {
        guard wakeTimer?.deadline != deadline else { return }
        if let wakeTimer { timekeeper.cancel(wakeTimer.id) }
        wakeTimer = deadline.map { deadline in (deadline, timekeeper.schedule(at: deadline) { [handle] in handle.wake() }) }
    }

    private func expire(at now: ContinuousClock.Instant) {
        for connection in Array(byID.values) {
            if let stalled = connection.stalledSince, now - stalled >= limits.writeTimeout {
                hangUp(connection)
                continue
            }
            if let alarm = connection.alarm, now >= alarm {
                connection.alarm = nil
                delegate.alarm(connection, on: self)
            }
            switch connection.phase {
            case .reading where connection.hasOutput, .busy, .streaming:
                break
            case .reading:
                if let started = connection.requestStartedAt {
                    guard now - started >= limits.requestTimeout else { break }
                    delegate.requestTimedOut(connection, on: self)
                    connection.close()
                } else if now - connection.lastActivity >= limits.idleTimeout {
                    hangUp(connection)
                }
            case .closing:
                if let until = connection.lingerUntil, now >= until { hangUp(connection) }
            }
        }
    }

    // MARK: Writing and hanging up

    private func write(_ connection: PollConnection, at now: ContinuousClock.Instant) {
        guard byID[connection.id] === connection else { return }
        if connection.hasOutput {
            let written = connection.write(at: now) { bytes, offset in
                while true {
                    let sent = bytes.withUnsafeBytes {
                        send(connection.descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                    }
                    if sent >= 0 { return sent }
                    if errno == EINTR { continue }
                    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1
                }
            }
            guard written else { return hangUp(connection) }
        }
        if connection.phase == .streaming, let limit = limits.streamOutputBytes, connection.outputBytes > limit {
            delegate.report(.fellBehind(bytes: connection.outputBytes), on: self)
            return hangUp(connection)
        }
        guard connection.phase == .closing, !connection.hasOutput, connection.lingerUntil == nil else { return }
        if connection.inputEnded { return hangUp(connection) }
        // All said: the client sees the end; what it still sends is drained until it closes.
        shutdown(connection.descriptor, Int32(SHUT_WR))
        connection.lingerUntil = now + limits.lingerTimeout
    }

    private func hangUp(_ connection: PollConnection) {
        guard byID.removeValue(forKey: connection.id) != nil else { return }
        Glibc.close(connection.descriptor)
        delegate.closed(connection, on: self)
    }
}
