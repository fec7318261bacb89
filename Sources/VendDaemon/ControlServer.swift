import Dispatch
import FoundationEssentials
import Logging
import Synchronization
import VendControl
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// Serves the control socket from one thread in poll(2): every client is a non-blocking socket
/// with its own input and output buffer. A request is handled on that thread and answered after
/// its effects (the handler returns once the machine has carried them out). Nothing a client does
/// can hold the machine: a request is one input in the machine's inbox, like a button press, and
/// the machine's lane never waits for a client (a `watch` line is only handed over).
///
/// What a hostile or broken local client cannot do: take every descriptor (at most `clients`
/// connections; when full, or out of descriptors, the longest-idle one is hung up for a
/// newcomer, or the newcomer is told `busy`), hang a connection with half a line
/// (`partialLineTimeout`), sit on a connection forever (`idleTimeout`), stall a `watch` (its
/// backlog is bounded), or end the accept loop (EMFILE and the like are logged and served).
final class ControlServer: Sendable {
    typealias Handler = @Sendable (ControlRequest, UnixSocket.PeerCredentials?) -> ControlResponse

    struct Limits: Sendable {
        /// Connections at once. vendctl connects, asks and hangs up within milliseconds.
        var clients = 64
        /// Of those, `watch` streams (the display and technicians following events).
        var watchers = 16
        var partialLineTimeout: Duration = .seconds(5)
        var idleTimeout: Duration = .seconds(60)
        /// A client this new is not hung up to make room: it has not had time to ask.
        var evictionGrace: Duration = .milliseconds(250)
        /// A watcher this far behind is disconnected rather than buffered without end.
        var watchBacklogBytes = 1 << 20
    }

    let path: String
    private let listener: UnixSocket
    private let handler: Handler
    private let events: EventFanOut
    private let logger: Logger
    private let limits: Limits
    private let wake: Waiter
    /// Event lines for watchers, handed over by the publishing thread; drained by the server's.
    private let watchOutput = Mutex<[Int32: [UInt8]]>([:])
    private let stopping = Mutex(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Listens at `path` with mode 0666: anyone local may ask; the handler checks who may change.
    init(path: String, logger: Logger, handler: @escaping Handler, events: EventFanOut, limits: Limits = Limits()) throws(UnixSocket.Failure) {
        self.path = path
        listener = try UnixSocket.listen(at: path, mode: 0o666)
        try listener.makeNonBlocking()
        do {
            wake = try Waiter()
        } catch {
            throw .system(error)
        }
        self.handler = handler
        self.events = events
        self.logger = logger
        self.limits = limits
    }

    func start() {
        PosixThread.start(name: "vendd-control") { [self] in
            var loop = ServerLoop(server: self)
            loop.run()
            finished.signal()
        }
    }

    /// Stops serving: every client hung up, the socket file removed if it is still this
    /// server's (never another vendd's that replaced it).
    func stop() {
        stopping.withLock { $0 = true }
        wake.wake()
        finished.wait()
        listener.removeFile()
    }

    /// The server thread's state: only that thread touches it.
    private struct ServerLoop {
        final class Client {
            let socket: UnixSocket
            let peer: UnixSocket.PeerCredentials?
            var input: [UInt8] = []
            var output: [UInt8] = []
            let connectedAt: ContinuousClock.Instant
            var lastActivity: ContinuousClock.Instant
            var watching: EventFanOut.SubscriptionID?
            /// Hang up once the output is sent.
            var closing = false

            init(socket: UnixSocket, at now: ContinuousClock.Instant) {
                self.socket = socket
                peer = socket.peerCredentials()
                connectedAt = now
                lastActivity = now
            }
        }

        let server: ControlServer
        var clients: [Int32: Client] = [:]
        /// Open while descriptors are plentiful; spent to answer `busy` when they run out.
        var spare: Int32 = open("/dev/null", O_RDONLY | O_CLOEXEC)
        var acceptPausedUntil: ContinuousClock.Instant?
        var lastAcceptComplaint: ContinuousClock.Instant?

        init(server: ControlServer) {
            self.server = server
        }

        mutating func run() {
            while !server.stopping.withLock({ $0 }) {
                let now = MonotonicClock.now
                if let paused = acceptPausedUntil, now >= paused { acceptPausedUntil = nil }
                var fds = [pollfd(fd: server.listener.descriptor, events: acceptPausedUntil == nil ? Int16(POLLIN) : 0, revents: 0)]
                let order = Array(clients.keys)
                for descriptor in order {
                    let client = clients[descriptor]!
                    let wantsOutput = !client.output.isEmpty
                    fds.append(pollfd(fd: descriptor, events: Int16(POLLIN) | (wantsOutput ? Int16(POLLOUT) : 0), revents: 0))
                }
                let ready: Bool
                do {
                    ready = try server.wake.wait(&fds, timeout: nextDeadline(after: now).map { max(.zero, $0 - now) })
                } catch {
                    server.logger.error("control socket: \(error); serving again in 1 s")
                    usleep(1_000_000)
                    continue
                }
                drainWatchOutput()
                if ready {
                    if fds[0].revents & Int16(POLLIN) != 0 { acceptClients() }
                    for (index, descriptor) in order.enumerated() where fds[index + 1].revents != 0 {
                        serve(descriptor, events: fds[index + 1].revents)
                    }
                }
                flushAll()
                closeExpired(at: MonotonicClock.now)
            }
            for descriptor in Array(clients.keys) { hangUp(descriptor) }
            if spare >= 0 { close(spare) }
        }

        // MARK: Accepting

        mutating func acceptClients() {
            while true {
                switch server.listener.acceptPending() {
                case .client(let socket):
                    admit(Client(socket: socket, at: MonotonicClock.now))
                case .none:
                    return
                case .failed(let error) where error.errno == ECONNABORTED:
                    continue
                case .failed(let error):
                    guard outOfResources(error) else { return }
                }
            }
        }

        /// EMFILE, ENFILE, ENOMEM and the like: say so (once a minute) and make room, so that the
        /// clients waiting in the kernel's queue — a technician among them — are still answered:
        /// the longest-idle client is hung up, or the spare descriptor tells the next one `busy`.
        /// True when accepting may go on; false to listen again shortly.
        mutating func outOfResources(_ error: SystemError) -> Bool {
            let now = MonotonicClock.now
            if lastAcceptComplaint.map({ now - $0 >= .seconds(60) }) ?? true {
                server.logger.error(
                    "control socket: cannot accept a client (\(error.reason)); the longest-idle clients are hung up to make room. Is a local program opening connections without end? (ls -l /proc/$(pidof vendd)/fd)"
                )
                lastAcceptComplaint = now
            }
            if let idlest = evictable(at: now) {
                hangUp(idlest.socket.descriptor)
                return true
            }
            if spare >= 0 {
                close(spare)
                if case .client(let socket) = server.listener.acceptPending() {
                    refuse(socket, "vendd cannot take more connections now (\(error.reason)); try again in a moment")
                }
                spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
                if spare >= 0 { return true }
            }
            acceptPausedUntil = now + .milliseconds(250)
            return false
        }

        /// The client to hang up for a newcomer: the longest idle among those that are not
        /// watching and have been connected long enough to have sent their request.
        func evictable(at now: ContinuousClock.Instant) -> Client? {
            clients.values.filter { $0.watching == nil && now - $0.connectedAt >= server.limits.evictionGrace }
                .min { $0.lastActivity < $1.lastActivity }
        }

        mutating func admit(_ client: Client) {
            if clients.count >= server.limits.clients {
                // Full: the longest-idle client makes room (a half line is no claim to a place);
                // if every client is new or watching, the newcomer is told to come back.
                guard let idlest = evictable(at: client.connectedAt) else {
                    return refuse(client.socket, "vendd is serving \(clients.count) clients, its limit; try again in a moment")
                }
                hangUp(idlest.socket.descriptor)
            }
            clients[client.socket.descriptor] = client
        }

        func refuse(_ socket: UnixSocket, _ message: String) {
            // One best-effort line: a new socket's buffer takes it whole, or the client loses it.
            if let json = try? JSONEncoder().encode(ControlResponse.failure(ControlError(.busy, message))) {
                _ = try? socket.sendAvailable(ArraySlice(json + [UInt8(ascii: "\n")]))
            }
        }

        // MARK: Serving

        mutating func serve(_ descriptor: Int32, events: Int16) {
            guard let client = clients[descriptor] else { return }
            if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                readRequests(client)
            }
            if events & Int16(POLLNVAL) != 0 { hangUp(descriptor) }
        }

        mutating func readRequests(_ client: Client) {
            while true {
                let chunk: [UInt8]?
                do {
                    chunk = try client.socket.receiveAvailable()
                } catch {
                    return hangUp(client.socket.descriptor)
                }
                // End of stream: a watcher or a client that asked and hung up.
                guard let chunk else { return hangUp(client.socket.descriptor) }
                if chunk.isEmpty { return }
                client.lastActivity = MonotonicClock.now
                // A watcher sends nothing more; whatever it sends is ignored.
                if client.watching != nil || client.closing { continue }
                client.input += chunk
                answerCompleteLines(client)
                if client.input.count > ControlProtocol.maximumRequestBytes { refuseLongLine(client) }
            }
        }

        mutating func answerCompleteLines(_ client: Client) {
            while !client.closing, client.watching == nil, let newline = client.input.firstIndex(of: UInt8(ascii: "\n")) {
                guard newline <= ControlProtocol.maximumRequestBytes else { return refuseLongLine(client) }
                let line = String(decoding: client.input[..<newline], as: UTF8.self)
                client.input.removeSubrange(...newline)
                switch ControlRequest.decode(line: line) {
                case .failure(let error):
                    reply(.failure(error), to: client)
                case .success(let request) where request.command == .watch:
                    startWatching(client)
                case .success(let request):
                    reply(server.handler(request, client.peer), to: client)
                }
            }
        }

        func refuseLongLine(_ client: Client) {
            reply(.failure(ControlError(.badRequest, "request longer than \(ControlProtocol.maximumRequestBytes) bytes")), to: client)
            client.input.removeAll()
            client.closing = true
        }

        mutating func startWatching(_ client: Client) {
            let watchers = clients.values.filter { $0.watching != nil }.count
            guard watchers < server.limits.watchers else {
                reply(.failure(ControlError(.busy, "vendd already streams events to \(watchers) watchers, its limit; try again later")), to: client)
                client.closing = true
                return
            }
            reply(.success("watching; one line per event"), to: client)
            let descriptor = client.socket.descriptor
            let server = server
            client.watching = server.events.subscribe { event in
                guard let json = try? JSONEncoder().encode(event) else { return }
                server.watchOutput.withLock { $0[descriptor, default: []] += json + [UInt8(ascii: "\n")] }
                server.wake.wake()
            }
        }

        func reply(_ response: ControlResponse, to client: Client) {
            guard let json = try? JSONEncoder().encode(response) else { return }
            client.output += json + [UInt8(ascii: "\n")]
        }

        // MARK: Writing, timeouts, hanging up

        mutating func drainWatchOutput() {
            let pending = server.watchOutput.withLock { pending in
                defer { pending.removeAll() }
                return pending
            }
            for (descriptor, bytes) in pending {
                guard let client = clients[descriptor] else { continue }
                client.output += bytes
                if client.output.count > server.limits.watchBacklogBytes {
                    server.logger.warning("control socket: a watch client fell \(client.output.count) bytes behind; disconnected")
                    hangUp(descriptor)
                }
            }
        }

        mutating func flushAll() {
            for client in Array(clients.values) {
                do {
                    if !client.output.isEmpty { client.output.removeFirst(try client.socket.sendAvailable(client.output[...])) }
                } catch {
                    hangUp(client.socket.descriptor)
                    continue
                }
                if client.closing, client.output.isEmpty { hangUp(client.socket.descriptor) }
            }
        }

        /// The earliest moment a client times out, if any client can.
        func nextDeadline(after now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
            let deadlines = clients.values.compactMap(deadline)
            return (deadlines + [acceptPausedUntil].compactMap { $0 }).min()
        }

        func deadline(of client: Client) -> ContinuousClock.Instant? {
            if client.watching != nil { return nil }
            return client.lastActivity + (client.input.isEmpty ? server.limits.idleTimeout : server.limits.partialLineTimeout)
        }

        mutating func closeExpired(at now: ContinuousClock.Instant) {
            for client in Array(clients.values) {
                guard let deadline = deadline(of: client), now >= deadline else { continue }
                if !client.input.isEmpty {
                    reply(
                        .failure(
                            ControlError(
                                .badRequest, "no complete request line within \(server.limits.partialLineTimeout.wholeMilliseconds / 1000) s; closing"
                            )), to: client)
                    _ = try? client.socket.sendAvailable(client.output[...])
                }
                hangUp(client.socket.descriptor)
            }
        }

        mutating func hangUp(_ descriptor: Int32) {
            guard let client = clients.removeValue(forKey: descriptor) else { return }
            if let subscription = client.watching {
                server.events.unsubscribe(subscription)
                _ = server.watchOutput.withLock { $0.removeValue(forKey: descriptor) }
            }
            client.socket.shutDown()
        }
    }
}
