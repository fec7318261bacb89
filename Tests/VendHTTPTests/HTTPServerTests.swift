import Synchronization
import Testing
import VendHTTP
import VendTime

#if canImport(Glibc)
    import Glibc
#endif

/// The server on real sockets on loopback: what a browser does, and what a hostile client does.
/// Deadlines run on a manual clock the test advances; it learns that the server has looked at
/// the time from an answer (a turn that answers has judged every deadline at the clock's time).
@Suite(.timeLimit(.minutes(2))) struct HTTPServerTests {
    static func router(events: HTTPEventBroadcast = HTTPEventBroadcast()) -> HTTPRouter {
        var router = HTTPRouter()
        router.get("/") { _, _ in .response(HTTPResponse(text: "the page", type: "text/html")) }
        router.get("/hello/:name") { _, parameters in .response(HTTPResponse(text: "hello \(parameters["name"]!)", type: "text/plain")) }
        router.post("/select/:slot") { request, parameters in
            .response(HTTPResponse(text: "selected \(parameters["slot"]!) \(request.body.count)", type: "text/plain"))
        }
        router.post("/slow") { _, _ in
            usleep(1_000_000)
            return .response(HTTPResponse(status: .noContent))
        }
        router.get("/events") { _, _ in .events(events) }
        return router
    }

    /// A server on a free port, serving on its thread; stopped by `body`'s end.
    static func serving(
        _ limits: HTTPServer.Limits = HTTPServer.Limits(), address: String = "127.0.0.1", events: HTTPEventBroadcast = HTTPEventBroadcast(),
        clock: any Timekeeper = HTTPServer.systemTime, _ body: (HTTPServer) throws -> Void
    ) throws {
        let server = try HTTPServer(
            address: address, port: 0, router: router(events: events), serverName: "test", limits: limits, timekeeper: clock)
        server.start()
        defer { server.stop() }
        try body(server)
    }

    static let get = "GET / HTTP/1.1\r\nHost: t\r\n\r\n"

    /// Returns once the server has read what every client sent before, at the clock's time: two
    /// requests answered one after the other (a client accepted in the first one's turn is read
    /// in the second's at the latest).
    static func settle(_ server: HTTPServer) throws {
        for _ in 0..<2 {
            let client = try TestClient(port: server.port)
            try client.send(get)
            #expect(try client.response().status == 200)
        }
    }

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
            #expect(try client.response().status == 404)
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
        ("\u{0}\u{1}\u{2} garbage\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: t\r\n\r\n", 505),
        ("POST /select/A1 HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n", 413),
        ("POST /select/A1 HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
        ("GET /" + String(repeating: "a", count: 5_000) + " HTTP/1.1\r\nHost: t\r\n\r\n", 414),
        ("GET / HTTP/1.1\r\nHost: t\r\n" + String(repeating: "X-Filler: 0123456789012345678901234567890123456789\r\n", count: 300) + "\r\n", 431),
    ])
    func malformedRequestsAreAnsweredAndClosed(request: String, status: Int) throws {
        try Self.serving { server in
            let client = try TestClient(port: server.port)
            try client.send(request)
            let answer = try client.response()
            #expect(answer.status == status)
            #expect(answer.headers["connection"] == "close")
            #expect(client.closedByServer())
            // The server serves on.
            let next = try TestClient(port: server.port)
            try next.send(Self.get)
            #expect(try next.response().status == 200)
        }
    }

    @Test func aRequestDrippedSlowlyTimesOutFromItsFirstByte() throws {
        let clock = ManualTimekeeper()
        try Self.serving(clock: clock) { server in
            let client = try TestClient(port: server.port)
            let request = Array("GET / HTTP/1.1\r\nHost: t\r\nX-A: b\r\n".utf8)
            try client.send([request[0]])
            try Self.settle(server)
            // One byte a second, as slowloris does: activity does not extend the deadline.
            for byte in request[1..<10] {
                clock.advance(by: .seconds(1))
                try client.send([byte])
            }
            clock.advance(by: .milliseconds(999))
            try Self.settle(server)
            #expect(client.isSilent())
            clock.advance(by: .milliseconds(1))
            #expect(try client.response().status == 408)
            #expect(client.closedByServer())
        }
    }

    @Test func anIdleConnectionIsClosedAtItsDeadlineAndNotBefore() throws {
        let clock = ManualTimekeeper()
        try Self.serving(clock: clock) { server in
            let client = try TestClient(port: server.port)
            try client.send(Self.get)
            #expect(try client.response().status == 200)
            clock.advance(by: .seconds(60) - .milliseconds(1))
            try Self.settle(server)
            #expect(client.isSilent())
            clock.advance(by: .milliseconds(1))
            #expect(client.closedByServer())
            #expect(eventually { server.statistics.connections == 0 })
        }
    }

    @Test func connectionsBeyondTheLimitAreRefused() throws {
        var limits = HTTPServer.Limits()
        limits.connections = 3
        limits.evictionGrace = .seconds(60)
        try Self.serving(limits) { server in
            // Three connections each in the middle of a request: none may be hung up for another.
            let held = try (0..<3).map { _ in try TestClient(port: server.port) }
            for client in held { try client.send("GET / HTTP/1.1\r\n") }
            #expect(eventually { server.statistics.connections == 3 })
            // Told at once, before it sends anything (what it would send is not read).
            let extra = try TestClient(port: server.port)
            #expect(try extra.response().status == 503)
            #expect(eventually { server.statistics.refused == 1 })
            #expect(server.statistics.connections == 3)
            // The held ones are still served.
            try held[0].send("Host: t\r\n\r\n")
            #expect(try held[0].response().status == 200)
        }
    }

    @Test func theLongestIdleConnectionMakesRoom() throws {
        var limits = HTTPServer.Limits()
        limits.connections = 2
        limits.evictionGrace = .zero
        let clock = ManualTimekeeper()
        try Self.serving(limits, clock: clock) { server in
            // Answered, so idle since the clock's time; the other one arrives later.
            let idle = try TestClient(port: server.port)
            try idle.send(Self.get)
            #expect(try idle.response().status == 200)
            clock.advance(by: .milliseconds(50))
            let busy = try TestClient(port: server.port)
            try busy.send("GET / HTTP/1.1\r\n")
            #expect(eventually { server.statistics.connections == 2 })
            let newcomer = try TestClient(port: server.port)
            try newcomer.send(Self.get)
            #expect(try newcomer.response().status == 200)
            #expect(idle.closedByServer())
            #expect(server.statistics.evicted == 1)
            try busy.send("Host: t\r\n\r\n")
            #expect(try busy.response().status == 200)
        }
    }

    @Test func halfRequestsAreNoClaimToAPlace() throws {
        var limits = HTTPServer.Limits()
        limits.connections = 3
        limits.evictionGrace = .milliseconds(100)
        limits.headerTimeout = .seconds(60)
        let clock = ManualTimekeeper()
        try Self.serving(limits, clock: clock) { server in
            // Slowloris holds every place with half a request: a browser still gets in.
            let held = try (0..<3).map { _ in try TestClient(port: server.port) }
            for client in held { try client.send("GET / HTTP/1.1\r\nX-A: ") }
            #expect(eventually { server.statistics.connections == 3 })
            clock.advance(by: .milliseconds(100))
            let browser = try TestClient(port: server.port)
            try browser.send(Self.get)
            #expect(try browser.response().status == 200)
            #expect(held.filter { $0.isClosedNow() }.count == 1)
            #expect(server.statistics.evicted == 1)
            #expect(server.statistics.refused == 0)
        }
    }

    @Test func aRefusedClientThatLingersMakesRoom() throws {
        var limits = HTTPServer.Limits()
        limits.connections = 2
        limits.evictionGrace = .zero
        limits.lingerTimeout = .seconds(30)
        try Self.serving(limits) { server in
            // One event stream (never hung up for another) and one refused client that keeps its
            // connection open (the server waits for its end while draining its input).
            let stream = try TestClient(port: server.port)
            try stream.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(eventually { server.statistics.streams == 1 })
            let refused = try TestClient(port: server.port)
            try refused.send("garbage\r\n\r\n")
            #expect(try refused.response().status == 400)
            let browser = try TestClient(port: server.port)
            try browser.send(Self.get)
            #expect(try browser.response().status == 200)
            #expect(server.statistics.evicted == 1)
            #expect(server.statistics.streams == 1)
        }
    }

    @Test func aSlowHandlerHoldsNoOtherClient() throws {
        try Self.serving { server in
            let slow = try TestClient(port: server.port)
            try slow.send("POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
            let started = ContinuousClock.now
            let quick = try TestClient(port: server.port)
            try quick.send(Self.get)
            #expect(try quick.response().status == 200)
            #expect(ContinuousClock.now - started < .milliseconds(800))
            #expect(try slow.response().status == 204)
        }
    }

    @Test func aRequestSentBeforeAHalfCloseIsAnswered() throws {
        try Self.serving { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /hello/half HTTP/1.1\r\nHost: t\r\n\r\n")
            shutdown(client.descriptor, Int32(SHUT_WR))
            #expect(try client.response().body == "hello half")
            #expect(client.closedByServer())
        }
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
            #expect(throws: HTTPServerError.address(address)) { try HTTPServer(address: address, port: 0, router: HTTPRouter()) }
        }
    }

    @Test func aBusyPortIsAnError() throws {
        try Self.serving { server in
            #expect(throws: HTTPServerError.self) { try HTTPServer(address: "127.0.0.1", port: server.port, router: HTTPRouter()) }
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
            #expect(eventually { events.subscriberCount == 1 })
            #expect(!events.publish(HTTPEventBroadcast.message(data: "one")), "the same view again is not news")
            #expect(events.publish(HTTPEventBroadcast.message(data: "two")))
            #expect(client.receive(until: "data: two\n\n"))
            #expect(!client.text.contains("data: one\n\ndata: one"))
            #expect(server.statistics.streams == 1)
        }
    }

    @Test func aStreamClientThatLeavesIsDropped() throws {
        let events = HTTPEventBroadcast()
        try Self.serving(events: events) { server in
            var client: TestClient? = try TestClient(port: server.port)
            try client!.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(client!.receive(until: "\r\n\r\n"))
            #expect(eventually { events.subscriberCount == 1 })
            client = nil
            #expect(eventually { events.subscriberCount == 0 && server.statistics.streams == 0 && server.statistics.connections == 0 })
        }
    }

    @Test func aSlowReaderLosesOldEventsNeverTheLatest() throws {
        let events = HTTPEventBroadcast()
        var limits = HTTPServer.Limits()
        limits.streamBacklog = 2
        try Self.serving(limits, events: events) { server in
            let client = try TestClient(port: server.port, receiveBuffer: 4_096)
            try client.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(eventually { events.subscriberCount == 1 })
            // Far more than the sockets' buffers hold, while the client reads nothing.
            let filler = String(repeating: "x", count: 1 << 20)
            for index in 0..<40 { events.publish(HTTPEventBroadcast.message(data: "view \(index) \(filler)")) }
            #expect(eventually { server.statistics.droppedEvents > 0 })
            #expect(client.receive(until: "view 39 "))
            let received = client.occurrences(of: "data: view ")
            #expect(received < 40)
            #expect(received >= 2)
        }
    }

    @Test func aStreamThatStopsTakingBytesIsHungUp() throws {
        let events = HTTPEventBroadcast()
        let clock = ManualTimekeeper()
        try Self.serving(events: events, clock: clock) { server in
            let client = try TestClient(port: server.port, receiveBuffer: 4_096)
            try client.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(eventually { events.subscriberCount == 1 })
            let filler = String(repeating: "x", count: 65_536)
            // A client that vanished without a word (or stopped reading): the kernel's buffers fill,
            // the server's output waits, and after the write timeout (30 s) the stream is dropped.
            var index = 0
            #expect(
                eventually(within: .seconds(10)) {
                    index += 1
                    events.publish(HTTPEventBroadcast.message(data: "view \(index) \(filler)"))
                    clock.advance(by: .seconds(5))
                    return events.subscriberCount == 0
                })
            #expect(index >= 6)
            #expect(eventually { server.statistics.streams == 0 })
        }
    }

    @Test func heartbeatsKeepAQuietStreamAlive() throws {
        let events = HTTPEventBroadcast()
        let clock = ManualTimekeeper()
        try Self.serving(events: events, clock: clock) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(client.receive(until: "\r\n\r\n"))
            clock.advance(by: .seconds(15) - .milliseconds(1))
            try Self.settle(server)
            #expect(client.isSilent())
            clock.advance(by: .milliseconds(1))
            #expect(client.receive(until: "\r\n\r\n: \n\n"))
            clock.advance(by: .seconds(15))
            #expect(client.receive(until: "\r\n\r\n: \n\n: \n\n"))
        }
    }

    @Test func eventStreamsBeyondTheirLimitAreRefused() throws {
        var limits = HTTPServer.Limits()
        limits.streams = 2
        try Self.serving(limits) { server in
            let streams = try (0..<2).map { _ in try TestClient(port: server.port) }
            for stream in streams { try stream.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n") }
            #expect(eventually { server.statistics.streams == 2 })
            let third = try TestClient(port: server.port)
            try third.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try third.response().status == 503)
            // Other requests are still served.
            let page = try TestClient(port: server.port)
            try page.send(Self.get)
            #expect(try page.response().status == 200)
        }
    }

    @Test func stopHangsUpEveryone() throws {
        let server = try HTTPServer(address: "127.0.0.1", port: 0, router: Self.router())
        server.start()
        let client = try TestClient(port: server.port)
        try client.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(client.receive(until: "\r\n\r\n"))
        server.stop()
        #expect(client.closedByServer())
    }
}
