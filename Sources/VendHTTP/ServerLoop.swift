import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// The server thread's state: only that thread touches it.
struct ServerLoop {
    final class Connection {
        enum State {
            /// Waiting for (the rest of) a request; `since` is its first byte's arrival.
            case reading(since: ContinuousClock.Instant?)
            /// A handler has the request.
            case handling(head: Bool, keepAlive: Bool)
            /// Streaming events until the client goes.
            case streaming(HTTPEventBroadcast, token: Int)
            /// Writing the last answer, then draining input until `until` or the client's end.
            case closing(until: ContinuousClock.Instant)
        }

        let id: Int
        let descriptor: Int32
        let connectedAt: ContinuousClock.Instant
        var state: State = .reading(since: nil)
        var input: [UInt8] = []
        /// Bytes being written now.
        var output: [UInt8] = []
        /// Stream events not yet started, oldest first.
        var queued: [[UInt8]] = []
        var lastActivity: ContinuousClock.Instant
        /// Since when output has waited without a byte taken (nil: nothing waits).
        var stalledSince: ContinuousClock.Instant?
        var lastWrite: ContinuousClock.Instant
        var shutDownWrite = false
        /// The client closed its side (or the server stopped reading it).
        var inputEnded = false
        /// New input that may complete a request.
        var needsParse = false

        init(id: Int, descriptor: Int32, at now: ContinuousClock.Instant) {
            self.id = id
            self.descriptor = descriptor
            connectedAt = now
            lastActivity = now
            lastWrite = now
        }

        var hasOutput: Bool { !output.isEmpty || !queued.isEmpty }

        var isStreaming: Bool {
            if case .streaming = state { true } else { false }
        }

        /// May be hung up for a newcomer: waiting for a request, or for the rest of one (half a
        /// request is no claim to a place), with nothing left to write; or closing, its last
        /// answer (a refusal, as a rule) written or not.
        var isEvictable: Bool {
            switch state {
            case .reading: !hasOutput
            case .closing: true
            case .handling, .streaming: false
            }
        }
    }

    let server: HTTPServer
    let parser: HTTPRequestParser
    var connections: [Int: Connection] = [:]
    var nextID = 0
    var acceptPausedUntil: ContinuousClock.Instant?

    init(server: HTTPServer) {
        self.server = server
        parser = HTTPRequestParser(limits: server.limits.parser)
    }

    var limits: HTTPServer.Limits { server.limits }

    mutating func run() {
        while !server.isStopping {
            let now = MonotonicClock.now
            if let paused = acceptPausedUntil, now >= paused { acceptPausedUntil = nil }
            var fds = [pollfd(fd: server.listener.descriptor, events: acceptPausedUntil == nil ? Int16(POLLIN) : 0, revents: 0)]
            let order = Array(connections.keys)
            for id in order {
                let connection = connections[id]!
                var events: Int16 = 0
                switch connection.state {
                case .handling: break
                // A request's worth is buffered: the rest waits in the kernel until it is answered.
                case .reading: if connection.input.count <= maximumRequestBytes { events |= Int16(POLLIN) }
                case .streaming, .closing: events |= Int16(POLLIN)
                }
                if connection.inputEnded { events &= ~Int16(POLLIN) }
                if connection.hasOutput { events |= Int16(POLLOUT) }
                // Nothing to wait for on it (a half-closed client whose answer is being made):
                // left out, or its hang-up would be reported without end.
                let descriptor = events == 0 && connection.inputEnded ? -1 : connection.descriptor
                fds.append(pollfd(fd: descriptor, events: events, revents: 0))
            }
            let ready: Bool
            do {
                // A request left in a buffer (its connection's last answer was just sent) is read at once.
                let timeout = connections.values.contains(where: \.needsParse) ? .zero : nextDeadline(after: now).map { max(.zero, $0 - now) }
                ready = try server.wake.wait(&fds, timeout: timeout)
            } catch {
                StandardError.write("vendd-http: poll: \(error); serving again in 1 s\n")
                usleep(1_000_000)
                continue
            }
            collectMail()
            if ready {
                if fds[0].revents & Int16(POLLIN) != 0 { acceptClients() }
                for (index, id) in order.enumerated() where fds[index + 1].revents != 0 {
                    guard let connection = connections[id] else { continue }
                    let revents = fds[index + 1].revents
                    if revents & Int16(POLLNVAL) != 0 {
                        hangUp(connection)
                        continue
                    }
                    if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { read(connection) }
                }
            }
            for connection in Array(connections.values) where connection.needsParse { answerNext(connection) }
            for connection in Array(connections.values) { write(connection) }
            expire(at: MonotonicClock.now)
            publishStatistics()
        }
        for connection in Array(connections.values) { hangUp(connection) }
        publishStatistics()
    }

    // MARK: Accepting

    mutating func acceptClients() {
        while true {
            switch server.listener.accept() {
            case .client(let descriptor):
                admit(descriptor)
            case .none:
                return
            case .failed(let error) where error.errno == ECONNABORTED || error.errno == EINTR:
                continue
            case .failed(let error):
                // Out of descriptors or memory: listen again shortly rather than spin.
                StandardError.write("vendd-http: cannot accept a connection: \(error.reason)\n")
                acceptPausedUntil = MonotonicClock.now + .milliseconds(250)
                return
            }
        }
    }

    mutating func admit(_ descriptor: Int32) {
        let now = MonotonicClock.now
        if connections.count >= limits.connections {
            // Full: the longest-idle connection that is not being answered makes room (connected
            // long enough to have sent a request); if there is none, 503.
            let idlest = connections.values.filter { $0.isEvictable && now - $0.connectedAt >= limits.evictionGrace }
                .min { $0.lastActivity < $1.lastActivity }
            guard let idlest else {
                let refusal = HTTPResponse.error(.serviceUnavailable, "too many connections; try again in a moment")
                var bytes = refusal.head(contentLength: refusal.body.count, close: true, serverName: server.serverName) + refusal.body
                // Best effort: a new socket's buffer takes it whole.
                _ = send(descriptor, &bytes, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                Glibc.close(descriptor)
                server.stats.withLock { $0.refused += 1 }
                return
            }
            hangUp(idlest)
            server.stats.withLock { $0.evicted += 1 }
        }
        nextID += 1
        connections[nextID] = Connection(id: nextID, descriptor: descriptor, at: now)
    }

    // MARK: Reading and answering

    mutating func read(_ connection: Connection) {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                return hangUp(connection)
            }
            if count == 0 { return endOfInput(connection) }
            connection.lastActivity = MonotonicClock.now
            switch connection.state {
            case .reading(let since):
                if since == nil { connection.state = .reading(since: MonotonicClock.now) }
                connection.input += chunk[..<count]
                // A new line may complete the head; a buffer past the limits is refused at once.
                if chunk[..<count].contains(.lf) || connection.input.count > maximumRequestBytes { connection.needsParse = true }
                // What a request can hold has been read: the rest waits in the kernel.
                if connection.input.count > maximumRequestBytes { return }
            case .handling:
                connection.input += chunk[..<count]
                if connection.input.count > maximumRequestBytes { return }
            case .streaming, .closing:
                // Nothing more is read from these: whatever comes is dropped.
                continue
            }
        }
    }

    var maximumRequestBytes: Int { limits.parser.requestLine + limits.parser.headerBytes + limits.parser.body + 16 }

    /// The client closed its side: a stream or an idle connection ends; a request being handled
    /// (or sent whole just before the end) is still answered, then the connection closes.
    mutating func endOfInput(_ connection: Connection) {
        connection.inputEnded = true
        switch connection.state {
        case .handling(let head, _):
            connection.state = .handling(head: head, keepAlive: false)
        case .reading where !connection.input.isEmpty && !connection.hasOutput:
            answerNext(connection)
            switch connection.state {
            case .handling(let head, _): connection.state = .handling(head: head, keepAlive: false)
            case .closing: break
            default: hangUp(connection)
            }
        case .reading where connection.hasOutput:
            // The last answer is still written; nothing after it will be.
            finish(connection)
        case .closing where connection.hasOutput:
            break
        default:
            hangUp(connection)
        }
    }

    /// Parses the next request in the input and hands it to its handler, or refuses it.
    mutating func answerNext(_ connection: Connection) {
        connection.needsParse = false
        // One answer at a time: a client that sends requests and reads no answers gets no more.
        guard case .reading = connection.state, !connection.input.isEmpty, !connection.hasOutput else { return }
        switch parser.parse(connection.input[...]) {
        case .incomplete:
            return
        case .invalid(let status, let reason):
            connection.input.removeAll()
            respond(connection, .error(status, reason), head: false, keepAlive: false)
        case .request(let request, let consumed):
            connection.input.removeFirst(consumed)
            let head = request.method == "HEAD"
            connection.state = .handling(head: head, keepAlive: request.keepAlive)
            let (router, server, id) = (server.router, server, connection.id)
            // A thread per request being handled (at most one per connection): a handler may wait
            // on vendd, and Dispatch's global queue runs only as many at once as there are cores.
            PosixThread.start(name: "vendd-http-req") {
                server.deliver(router.reply(to: request), to: id)
            }
        }
    }

    mutating func collectMail() {
        let mail = server.mailbox.withLock { mailbox in
            defer {
                mailbox.replies.removeAll()
                mailbox.events.removeAll()
                mailbox.dropped = 0
            }
            return mailbox
        }
        if mail.dropped > 0 { server.stats.withLock { $0.droppedEvents += mail.dropped } }
        for (id, reply) in mail.replies {
            guard let connection = connections[id], case .handling(let head, let keepAlive) = connection.state else { continue }
            switch reply {
            case .response(let response):
                respond(connection, response, head: head, keepAlive: keepAlive)
            case .events(let broadcast):
                startStream(connection, broadcast, head: head)
            }
        }
        for (id, events) in mail.events {
            guard let connection = connections[id], connection.isStreaming else { continue }
            connection.queued += events
            if connection.queued.count > limits.streamBacklog {
                let dropped = connection.queued.count - limits.streamBacklog
                connection.queued.removeFirst(dropped)
                server.stats.withLock { $0.droppedEvents += dropped }
            }
        }
    }

    /// Queues `response`; the connection then reads the next request, or closes.
    mutating func respond(_ connection: Connection, _ response: HTTPResponse, head: Bool, keepAlive: Bool) {
        let noBody = response.status.code == 204 || response.status.code == 304
        connection.output += response.head(contentLength: noBody ? nil : response.body.count, close: !keepAlive, serverName: server.serverName)
        if !head && !noBody { connection.output += response.body }
        if keepAlive {
            connection.state = .reading(since: connection.input.isEmpty ? nil : MonotonicClock.now)
            connection.needsParse = !connection.input.isEmpty
        } else {
            finish(connection)
        }
    }

    mutating func startStream(_ connection: Connection, _ broadcast: HTTPEventBroadcast, head: Bool) {
        let streams = connections.values.filter(\.isStreaming).count
        guard streams < limits.streams else {
            server.stats.withLock { $0.refused += 1 }
            return respond(connection, .error(.serviceUnavailable, "too many event streams; try again later"), head: head, keepAlive: false)
        }
        let response = HTTPResponse(status: .ok, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store")])
        // The stream ends with the connection: no Content-Length, and Connection: close.
        connection.output += response.head(contentLength: nil, close: true, serverName: server.serverName)
        connection.input.removeAll()
        if head { return finish(connection) }
        let (server, id) = (server, connection.id)
        let token = broadcast.subscribe { event in server.deliver(event: event, to: id) }
        connection.state = .streaming(broadcast, token: token)
        connection.lastWrite = MonotonicClock.now
    }

    /// Finishes writing, then closes (after draining what the client still sends).
    func finish(_ connection: Connection) {
        connection.state = .closing(until: MonotonicClock.now + limits.lingerTimeout + limits.writeTimeout)
        connection.input.removeAll()
    }

    // MARK: Writing

    mutating func write(_ connection: Connection) {
        let now = MonotonicClock.now
        while true {
            if connection.output.isEmpty, !connection.queued.isEmpty { connection.output = connection.queued.removeFirst() }
            guard !connection.output.isEmpty else { break }
            let sent = connection.output.withUnsafeBytes {
                send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                return hangUp(connection)
            }
            connection.output.removeFirst(sent)
            connection.stalledSince = nil
            connection.lastWrite = now
        }
        if connection.hasOutput {
            if connection.stalledSince == nil { connection.stalledSince = now }
            return
        }
        connection.stalledSince = nil
        if case .reading = connection.state, !connection.input.isEmpty { connection.needsParse = true }
        if case .closing = connection.state, connection.inputEnded { return hangUp(connection) }
        if case .closing(let until) = connection.state, !connection.shutDownWrite {
            // All said: the client sees the end; what it still sends is drained until it closes.
            shutdown(connection.descriptor, Int32(SHUT_WR))
            connection.shutDownWrite = true
            connection.state = .closing(until: min(until, now + limits.lingerTimeout))
        }
    }

    // MARK: Time

    func deadline(of connection: Connection) -> ContinuousClock.Instant? {
        var deadlines: [ContinuousClock.Instant] = []
        if let stalled = connection.stalledSince { deadlines.append(stalled + limits.writeTimeout) }
        switch connection.state {
        case .reading(let since):
            deadlines.append(since.map { $0 + limits.headerTimeout } ?? connection.lastActivity + limits.idleTimeout)
        case .handling:
            break
        case .streaming:
            if !connection.hasOutput { deadlines.append(connection.lastWrite + limits.heartbeat) }
        case .closing(let until):
            deadlines.append(until)
        }
        return deadlines.min()
    }

    func nextDeadline(after now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        (connections.values.compactMap(deadline) + [acceptPausedUntil].compactMap { $0 }).min()
    }

    mutating func expire(at now: ContinuousClock.Instant) {
        for connection in Array(connections.values) {
            if let stalled = connection.stalledSince, now - stalled >= limits.writeTimeout {
                hangUp(connection)
                continue
            }
            switch connection.state {
            case .reading(let since?) where now - since >= limits.headerTimeout:
                respond(connection, .error(.requestTimeout, "no complete request within \(limits.headerTimeout)"), head: false, keepAlive: false)
                write(connection)
            case .reading(nil) where now - connection.lastActivity >= limits.idleTimeout:
                hangUp(connection)
            case .streaming where !connection.hasOutput && now - connection.lastWrite >= limits.heartbeat:
                // A comment line: the browser ignores it; a client that went away fails or stalls.
                connection.output = Array(": \n\n".utf8)
                write(connection)
            case .closing(let until) where now >= until:
                hangUp(connection)
            default:
                break
            }
        }
    }

    // MARK: Hanging up

    mutating func hangUp(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        if case .streaming(let broadcast, let token) = connection.state { broadcast.unsubscribe(token) }
        _ = server.mailbox.withLock { $0.events.removeValue(forKey: connection.id) }
        Glibc.close(connection.descriptor)
    }

    func publishStatistics() {
        let (count, streams) = (connections.count, connections.values.filter(\.isStreaming).count)
        server.stats.withLock {
            $0.connections = count
            $0.streams = streams
        }
    }
}
