import VendPOSIX
import VendPollServer

#if canImport(Glibc)
    import Glibc
#endif

/// HTTP on the server's connections: parsing, handing each request to its route's thread,
/// writing answers and event streams. Only the server's thread touches it.
final class HTTPConnections: PollServerDelegate {
    /// A connection's request under way; a connection reading has none.
    enum Exchange {
        /// A handler has the request.
        case handling(head: Bool, keepAlive: Bool)
        /// Streaming events until the client goes.
        case streaming(HTTPEventBroadcast, token: Int)

        var isStreaming: Bool {
            if case .streaming = self { true } else { false }
        }
    }

    let server: HTTPServer
    let parser: HTTPRequestParser
    var exchanges: [Int: Exchange] = [:]

    init(server: HTTPServer) {
        self.server = server
        parser = HTTPRequestParser(limits: server.limits.parser)
    }

    var limits: HTTPServer.Limits { server.limits }

    func opened(_ connection: PollConnection, on poll: PollServer) {
        var on: Int32 = 1
        // Answers are small and whole: send them now, not after the next ACK.
        setsockopt(connection.descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        publishStatistics(poll)
    }

    /// Parses the next request in the input and hands it to its handler, or refuses it.
    func received(_ connection: PollConnection, on _: PollServer) {
        switch parser.parse(connection.input[...]) {
        case .incomplete:
            return
        case .invalid(let status, let reason):
            respond(connection, .error(status, reason), head: false, keepAlive: false)
        case .request(let request, let consumed):
            connection.consume(consumed)
            connection.hold()
            exchanges[connection.id] = .handling(head: request.method == "HEAD", keepAlive: request.keepAlive)
            let (router, server, id) = (server.router, server, connection.id)
            // A thread per request being handled (at most one per connection): a handler may wait
            // on vendd, and Dispatch's global queue runs only as many at once as there are cores.
            PosixThread.start(name: "vendd-http-req") {
                server.deliver(router.reply(to: request), to: id)
            }
        }
    }

    func requestTimedOut(_ connection: PollConnection, on _: PollServer) {
        respond(connection, .error(.requestTimeout, "no complete request within \(limits.headerTimeout)"), head: false, keepAlive: false)
    }

    func collect(on poll: PollServer) {
        let mail = server.mailbox.withLock { mailbox in
            defer {
                mailbox.replies.removeAll()
                mailbox.events.removeAll()
                mailbox.dropped = 0
            }
            return mailbox
        }
        var dropped = mail.dropped
        for (id, reply) in mail.replies {
            guard let connection = poll.connection(id), case .handling(let head, let keepAlive) = exchanges[id] else { continue }
            switch reply {
            case .response(let response):
                respond(connection, response, head: head, keepAlive: keepAlive)
            case .events(let broadcast):
                startStream(connection, broadcast, head: head, on: poll)
            }
        }
        for (id, events) in mail.events {
            guard let connection = poll.connection(id), exchanges[id]?.isStreaming == true else { continue }
            for event in events { dropped += connection.send(event, keepingAtMost: limits.streamBacklog) }
        }
        if dropped > 0 { server.stats.withLock { $0.droppedEvents += dropped } }
    }

    /// Queues `response`; the connection then reads the next request, or closes (also when its
    /// client has closed its side).
    func respond(_ connection: PollConnection, _ response: HTTPResponse, head: Bool, keepAlive: Bool) {
        exchanges[connection.id] = nil
        let noBody = response.status.code == 204 || response.status.code == 304
        let keepAlive = keepAlive && !connection.inputEnded
        var bytes = response.head(contentLength: noBody ? nil : response.body.count, close: !keepAlive, serverName: server.serverName)
        if !head && !noBody { bytes += response.body }
        connection.send(bytes)
        if keepAlive { connection.resume() } else { connection.close() }
    }

    func startStream(_ connection: PollConnection, _ broadcast: HTTPEventBroadcast, head: Bool, on poll: PollServer) {
        let streams = exchanges.values.filter(\.isStreaming).count
        guard streams < limits.streams else {
            server.stats.withLock { $0.refused += 1 }
            return respond(connection, .error(.serviceUnavailable, "too many event streams; try again later"), head: head, keepAlive: false)
        }
        let response = HTTPResponse(status: .ok, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store")])
        // The stream ends with the connection: no Content-Length, and Connection: close.
        connection.send(response.head(contentLength: nil, close: true, serverName: server.serverName))
        exchanges[connection.id] = nil
        if head { return connection.close() }
        let (server, id) = (server, connection.id)
        connection.stream()
        exchanges[id] = .streaming(broadcast, token: broadcast.subscribe { event in server.deliver(event: event, to: id) })
        connection.alarm = poll.timekeeper.now + limits.heartbeat
        publishStatistics(poll)
    }

    /// A stream quiet for `heartbeat` gets a comment line: the browser ignores it; a client that
    /// went away fails or stalls.
    func alarm(_ connection: PollConnection, on poll: PollServer) {
        let now = poll.timekeeper.now
        guard now - connection.lastWrite >= limits.heartbeat else {
            connection.alarm = connection.lastWrite + limits.heartbeat
            return
        }
        if !connection.hasOutput { connection.send(Array(": \n\n".utf8)) }
        connection.alarm = now + limits.heartbeat
    }

    func closed(_ connection: PollConnection, on poll: PollServer) {
        if case .streaming(let broadcast, let token) = exchanges.removeValue(forKey: connection.id) { broadcast.unsubscribe(token) }
        _ = server.mailbox.withLock { $0.events.removeValue(forKey: connection.id) }
        publishStatistics(poll)
    }

    func refusal(_ reason: PollServer.Refusal, on _: PollServer) -> [UInt8] {
        let refusal =
            switch reason {
            case .full: HTTPResponse.error(.serviceUnavailable, "too many connections; try again in a moment")
            case .outOfResources(let error): HTTPResponse.error(.serviceUnavailable, "cannot take more connections now (\(error.reason))")
            }
        return refusal.head(contentLength: refusal.body.count, close: true, serverName: server.serverName) + refusal.body
    }

    func report(_ event: PollServer.Event, on _: PollServer) {
        switch event {
        case .refused: server.stats.withLock { $0.refused += 1 }
        case .evicted: server.stats.withLock { $0.evicted += 1 }
        case .cannotAccept(let error): StandardError.write("vendd-http: cannot accept a connection: \(error.reason)\n")
        case .pollFailed(let error): StandardError.write("vendd-http: poll: \(error); serving again in 1 s\n")
        case .fellBehind: break
        }
    }

    func publishStatistics(_ poll: PollServer) {
        let (count, streams) = (poll.connections.count, exchanges.values.filter(\.isStreaming).count)
        server.stats.withLock {
            $0.connections = count
            $0.streams = streams
        }
    }
}
