import Synchronization
import Testing
import VendHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// The libmicrohttpd server as the kiosk and the back office use it, on real sockets on
/// loopback: what a browser does, and what a hostile client does. libmicrohttpd's timeouts are
/// whole seconds on the real clock: the tests that wait for one set it to 1 s.
@Suite(.timeLimit(.minutes(2))) struct HTTPServerTests {
    /// The `/slow` route's handler: it takes a second, and says when it started and finished, so
    /// that a test waits for it rather than guessing how long a loaded machine takes to get there.
    final class SlowHandler: Sendable {
        let started = Atomic<Bool>(false)
        let finished = Atomic<Bool>(false)

        func handle() -> HTTPResponse {
            started.store(true, ordering: .sequentiallyConsistent)
            usleep(1_000_000)
            finished.store(true, ordering: .sequentiallyConsistent)
            return HTTPResponse(status: 204)
        }

        var isRunning: Bool { started.load(ordering: .sequentiallyConsistent) && !isFinished }
        var isFinished: Bool { finished.load(ordering: .sequentiallyConsistent) }
    }

    static let slowRequest = "POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n"

    static func router(events: HTTPEventBroadcast = HTTPEventBroadcast(), slow: SlowHandler = SlowHandler()) -> HTTPRouter {
        var router = HTTPRouter()
        router.get("/") { _, _ in .response(HTTPResponse(text: "the page", type: "text/html")) }
        router.get("/hello/:name") { _, parameters in .response(HTTPResponse(text: "hello \(parameters["name"]!)", type: "text/plain")) }
        router.post("/select/:slot") { request, parameters in
            .response(HTTPResponse(text: "selected \(parameters["slot"]!) \(request.body.count)", type: "text/plain"))
        }
        router.post("/slow") { _, _ in .response(slow.handle()) }
        router.get("/events") { _, _ in .events(events) }
        return router
    }

    static var kiosk: HTTPServer.Limits {
        var limits = HTTPServer.Limits()
        limits.maxBody = 1024
        limits.connectionMemory = 16 * 1024
        return limits
    }

    /// A server on a free port, serving; stopped by `body`'s end.
    static func serving(
        _ limits: HTTPServer.Limits = kiosk, address: String = "127.0.0.1", dispatch: HTTPServer.Dispatch = .threadPerRequest,
        events: HTTPEventBroadcast = HTTPEventBroadcast(), slow: SlowHandler = SlowHandler(), _ body: (HTTPServer) throws -> Void
    ) throws {
        let server = try HTTPServer(
            address: address, port: 0, limits: limits, dispatch: dispatch, router: router(events: events, slow: slow))
        defer { server.stop() }
        try body(server)
    }

    static let get = "GET / HTTP/1.1\r\nHost: t\r\n\r\n"

    @Test func answersAndKeepsTheConnection() throws {
        try Self.serving { server in
            #expect(server.address == "127.0.0.1:\(server.port)")
            #expect(server.port > 0)
            let client = try TestClient(port: server.port)
            try client.send(Self.get)
            let first = try client.response()
            #expect(first.status == 200)
            #expect(first.body == "the page")
            #expect(first.headers["content-type"] == "text/html")
            #expect(first.headers["connection"] == nil)
            #expect(first.headers["date"]?.hasSuffix(" GMT") == true)
            try client.send("GET /hello/%ED%95%9C HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.response().body == "hello 한")
            try client.send("POST /select/A1 HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc")
            #expect(try client.response().body == "selected A1 3")
        }
    }

    @Test func headersAndArgumentsAsAsked() throws {
        var limits = HTTPServer.Limits()
        limits.headers = ["cookie"]
        limits.arguments = ["q"]
        let seen = Mutex<HTTPRequest?>(nil)
        let server = try HTTPServer(address: "127.0.0.1", port: 0, limits: limits) { request in
            seen.withLock { $0 = request }
            return .response(HTTPResponse(status: 204))
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        try client.send("GET /a%20b?q=x%26y&other=1 HTTP/1.1\r\nHost: t\r\nCookie: s=1\r\nX-Other: 2\r\n\r\n")
        #expect(try client.response().status == 204)
        let request = try #require(seen.withLock { $0 })
        #expect(request.method == "GET")
        #expect(request.path == "/a b")
        #expect(request.segments == ["a b"])
        #expect(request.headers == ["cookie": "s=1"])
        #expect(request.query == ["q": "x&y"])
        #expect(request.peer == "127.0.0.1")
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        try Self.serving { server in
            let client = try TestClient(port: server.port)
            try client.send(
                "POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\nGET /hello/b HTTP/1.1\r\nHost: t\r\n\r\nGET /hello/c HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
            )
            #expect(try client.response().status == 204)
            #expect(try client.response().body == "hello b")
            let last = try client.response()
            #expect(last.body == "hello c")
            #expect(last.headers["connection"] == "close")
            #expect(client.closedByServer())
        }
    }

    @Test func notFoundMethodNotAllowedAndHead() throws {
        try Self.serving { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n")
            let missing = try client.response()
            #expect(missing.status == 404)
            #expect(missing.body == "Not Found\n")
            try client.send("DELETE /hello/x HTTP/1.1\r\nHost: t\r\n\r\n")
            let refused = try client.response()
            #expect(refused.status == 405)
            #expect(refused.headers["allow"] == "GET, HEAD")
            try client.send("GET /select/A1 HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.response().headers["allow"] == "POST")
            try client.send("HEAD / HTTP/1.1\r\nHost: t\r\n\r\n")
            let head = try client.response(head: true)
            #expect(head.status == 200)
            #expect(head.headers["content-length"] == "8")
            // No body came after the head: the next answer is the next request's.
            try client.send("GET /hello/z HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.response().body == "hello z")
        }
    }

    @Test(arguments: [
        ("\u{16}\u{3}\u{1} not http at all\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: t\r\n\r\n", 505),
        // Refused on its Content-Length, before a byte of the body is read.
        ("POST /select/A1 HTTP/1.1\r\nHost: t\r\nContent-Length: 999999999\r\n\r\n", 413),
        ("GET /" + String(repeating: "a", count: 17_000) + " HTTP/1.1\r\nHost: t\r\n\r\n", 414),
        ("GET / HTTP/1.1\r\nHost: t\r\n" + String(repeating: "X-Filler: 0123456789012345678901234567890123456789\r\n", count: 400) + "\r\n", 431),
    ])
    func malformedRequestsAreAnsweredAndClosed(request: String, status: Int) throws {
        try Self.serving { server in
            let client = try TestClient(port: server.port)
            try client.send(request)
            let answer = try client.response()
            #expect(answer.status == status)
            #expect(client.closedByServer())
            // The server serves on.
            let next = try TestClient(port: server.port)
            try next.send(Self.get)
            #expect(try next.response().status == 200)
        }
    }

    /// libmicrohttpd 0.9.75 reads a line that starts with NUL as an empty one and waits for the
    /// request: such a client is closed at the timeout, unanswered.
    @Test func aRequestStartingWithNULIsClosedAtTheTimeout() throws {
        var limits = Self.kiosk
        limits.timeoutSeconds = 1
        try Self.serving(limits) { server in
            let client = try TestClient(port: server.port)
            try client.send("\u{0}\u{1}\u{2} garbage\r\n\r\n")
            #expect(client.closedByServer())
            #expect(client.text.isEmpty || client.text.hasPrefix("HTTP/1.1 400 "))
        }
    }

    @Test func aChunkedBodyIs411() throws {
        try Self.serving { server in
            let client = try TestClient(port: server.port)
            try client.send("POST /select/A1 HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
            let refused = try client.response()
            #expect(refused.status == 411)
            #expect(refused.body == "a request body needs a Content-Length\n")
            #expect(client.closedByServer())
        }
    }

    @Test func aHalfRequestAndAnIdleConnectionAreClosedAtTheTimeout() throws {
        var limits = Self.kiosk
        limits.timeoutSeconds = 1
        try Self.serving(limits) { server in
            let half = try TestClient(port: server.port)
            try half.send("GET / HTTP/1.1\r\nHost: t\r\nX-Drip: ")
            let idle = try TestClient(port: server.port)
            try idle.send(Self.get)
            #expect(try idle.response().status == 200)
            let started = ContinuousClock.now
            #expect(half.isSilent())
            #expect(half.closedByServer())
            #expect(idle.closedByServer())
            let waited = ContinuousClock.now - started
            #expect(waited > .milliseconds(500) && waited < .seconds(4), "closed after \(waited)")
        }
    }

    /// Starts the slow request, and once its handler runs asks for the page on another
    /// connection: whether the slow handler had finished when that answer came.
    static func slowHandlerFinishedBeforeAnotherClientsAnswer(dispatch: HTTPServer.Dispatch) throws -> Bool {
        let handler = SlowHandler()
        var finished = false
        try serving(dispatch: dispatch, slow: handler) { server in
            let slow = try TestClient(port: server.port)
            try slow.send(slowRequest)
            #expect(eventually { handler.isRunning })
            let other = try TestClient(port: server.port)
            try other.send(get)
            #expect(try other.response().status == 200)
            finished = handler.isFinished
            #expect(try slow.response().status == 204)
        }
        return finished
    }

    @Test func aSlowHandlerHoldsNoOtherClient() throws {
        #expect(try !Self.slowHandlerFinishedBeforeAnotherClientsAnswer(dispatch: .threadPerRequest))
    }

    @Test func onTheServerThreadRequestsAreHandledOneAtATime() throws {
        #expect(try Self.slowHandlerFinishedBeforeAnotherClientsAnswer(dispatch: .serverThread), "the slow one went first")
    }

    @Test func ipv6Loopback() throws {
        try Self.serving(address: "::1") { server in
            #expect(server.address == "[::1]:\(server.port)")
            let client = try TestClient(port: server.port, ipv6: true)
            try client.send(Self.get)
            #expect(try client.response().body == "the page")
        }
    }

    @Test func addressesThatAreNotLiteralsAreRefused() {
        for address in ["localhost", "300.1.1.1", "::g", ""] {
            #expect {
                try HTTPServer(address: address, port: 0, router: HTTPRouter())
            } throws: { error in
                (error as? HTTPServer.Failure)?.description == "'\(address)' is not an IPv4 or IPv6 address"
            }
        }
    }

    @Test func aBusyPortIsAnError() throws {
        try Self.serving { server in
            #expect {
                try HTTPServer(address: "127.0.0.1", port: server.port, router: HTTPRouter())
            } throws: { error in
                (error as? HTTPServer.Failure)?.description.contains("could not listen on 127.0.0.1 port \(server.port)") == true
            }
        }
    }

    // MARK: Server-sent events

    @Test func eventsTheLatestOnConnectThenEveryChange() throws {
        let events = HTTPEventBroadcast()
        events.publish(HTTPEventBroadcast.message(data: "one"))
        try Self.serving(events: events) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(client.receive(until: "data: one\n\n"))
            #expect(client.text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(client.text.contains("Content-Type: text/event-stream\r\n"))
            #expect(client.text.contains("Cache-Control: no-store\r\n"))
            #expect(!client.text.contains("Content-Length"))
            #expect(events.subscriberCount == 1)
            #expect(!events.publish(HTTPEventBroadcast.message(data: "one")), "the same view again is not news")
            #expect(events.publish(HTTPEventBroadcast.message(data: "two")))
            #expect(client.receive(until: "data: two\n\n"))
            #expect(client.occurrences(of: "data: one\n\n") == 1)
            #expect(server.streams == 1)
        }
    }

    @Test func aStreamClientThatLeavesIsDroppedAtTheNextWrite() throws {
        let events = HTTPEventBroadcast()
        var limits = Self.kiosk
        limits.heartbeatSeconds = 1
        try Self.serving(limits, events: events) { server in
            var client: TestClient? = try TestClient(port: server.port)
            try client!.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(client!.receive(until: "\r\n\r\n"))
            #expect(eventually { server.streams == 1 })
            client = nil
            // A quiet stream waits suspended, unwatched: the heartbeat's write finds the client gone.
            #expect(eventually { server.streams == 0 })
            events.publish(HTTPEventBroadcast.message(data: "news"))
            #expect(events.subscriberCount == 0)
        }
    }

    @Test func heartbeatsOnAQuietStream() throws {
        var limits = Self.kiosk
        limits.heartbeatSeconds = 1
        try Self.serving(limits) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(client.receive(until: "\r\n\r\n"))
            #expect(client.receive(until: ": \n\n"))
            while client.occurrences(of: ": \n\n") < 2, client.receive() {}
            #expect(client.occurrences(of: ": \n\n") >= 2)
        }
    }

    @Test func aSlowReaderLosesOldEventsNeverTheLatest() throws {
        let events = HTTPEventBroadcast()
        var limits = Self.kiosk
        limits.streamBacklog = 2
        try Self.serving(limits, events: events) { server in
            let client = try TestClient(port: server.port, receiveBuffer: 4_096)
            try client.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(eventually { events.subscriberCount == 1 })
            // Far more than the sockets' buffers hold, while the client reads nothing.
            let filler = String(repeating: "x", count: 256 << 10)
            for index in 0..<40 { events.publish(HTTPEventBroadcast.message(data: "view \(index) \(filler)")) }
            #expect(client.receive(until: "view 39 "))
            let received = client.occurrences(of: "data: view ")
            #expect(received < 40)
            #expect(received >= 2)
        }
    }

    @Test func aStreamThatStopsTakingBytesIsHungUp() throws {
        let events = HTTPEventBroadcast()
        var limits = Self.kiosk
        limits.timeoutSeconds = 1
        try Self.serving(limits, events: events) { server in
            let client = try TestClient(port: server.port, receiveBuffer: 4_096)
            try client.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(eventually { events.subscriberCount == 1 })
            // A client that stopped reading: the kernel's buffers fill, libmicrohttpd's output
            // waits, and after the timeout the connection is closed.
            let filler = String(repeating: "x", count: 1 << 20)
            for index in 0..<4 { events.publish(HTTPEventBroadcast.message(data: "view \(index) \(filler)")) }
            #expect(eventually(within: .seconds(10)) { server.streams == 0 })
        }
    }

    @Test func eventStreamsBeyondTheirLimitAreRefused() throws {
        var limits = Self.kiosk
        limits.streams = 2
        try Self.serving(limits) { server in
            let streams = try (0..<2).map { _ in try TestClient(port: server.port) }
            for stream in streams { try stream.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n") }
            #expect(eventually { server.streams == 2 })
            let third = try TestClient(port: server.port)
            try third.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            let refused = try third.response()
            #expect(refused.status == 503)
            #expect(refused.body == "too many event streams; try again later\n")
            // Other requests are still served.
            let page = try TestClient(port: server.port)
            try page.send(Self.get)
            #expect(try page.response().status == 200)
        }
    }

    @Test func stopWaitsForHandlersAndHangsUpStreams() throws {
        let handler = SlowHandler()
        let server = try HTTPServer(
            address: "127.0.0.1", port: 0, limits: Self.kiosk, dispatch: .threadPerRequest, router: Self.router(slow: handler))
        let stream = try TestClient(port: server.port)
        try stream.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(stream.receive(until: "\r\n\r\n"))
        let slow = try TestClient(port: server.port)
        try slow.send(Self.slowRequest)
        #expect(eventually { handler.isRunning })
        server.stop()
        #expect(handler.isFinished, "stop waited for the slow handler")
        #expect(stream.closedByServer())
        #expect(slow.closedByServer())
    }
}
