import Synchronization
import Testing
import VendPOSIX
import VendPollServer
import VendTime
import VenddTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The core's limits and deadlines on a manual clock: the test turns the loop itself (never
/// waiting) and advances time, so every instant is exact and nothing sleeps. The time limit is
/// wide: at the start of a full `swift test` other targets' blocking tests held both threads of
/// the pool for 175 s, and these timed out without having run.
@Suite(.timeLimit(.minutes(5))) struct PollServerTests {
    static let limits = PollServer.Limits(
        connections: 3, idleTimeout: .seconds(60), requestTimeout: .seconds(5), writeTimeout: .seconds(10), lingerTimeout: .seconds(2),
        evictionGrace: .seconds(1), inputBytes: 64, streamOutputBytes: 100_000)

    @Test func anIdleClientIsHungUpAtItsDeadlineAndNotBefore() throws {
        let rig = try Rig()
        defer { rig.remove() }
        let client = try rig.connect()
        rig.advance(through: .seconds(60)) {
            #expect(client.read() == "")
            #expect(rig.server.connections.count == 1)
        }
        #expect(client.read() == nil)
        #expect(rig.server.connections.isEmpty)
        #expect(rig.lines.closed == 1)
    }

    @Test func aRequestAnsweredStartsTheIdleTimeAfresh() throws {
        let rig = try Rig()
        defer { rig.remove() }
        let client = try rig.connect()
        rig.clock.advance(by: .seconds(30))
        #expect(try rig.ask(client, "ping\n") == "pong\n")
        rig.advance(through: .seconds(60)) { #expect(client.read() == "") }
        #expect(client.read() == nil)
    }

    @Test func aSlowDripTimesOutFromItsFirstByteHoweverOftenItDrips() throws {
        let rig = try Rig()
        defer { rig.remove() }
        let client = try rig.connect()
        rig.clock.advance(by: .seconds(20))
        // A byte a second: each one is activity, none moves the request's deadline.
        for byte in "ping" {
            try client.send(String(byte))
            rig.serve()
            rig.clock.advance(by: .seconds(1))
        }
        rig.advance(through: .seconds(1)) { #expect(client.read() == "") }
        // Told why, then the end of the stream; the server drains it until the linger ends.
        #expect(client.read() == "error: no complete line within 5 s\n")
        #expect(client.read() == nil)
        #expect(rig.server.connections.count == 1)
        rig.clock.advance(by: .seconds(2))
        rig.serve()
        #expect(rig.server.connections.isEmpty)
    }

    @Test func aFloodBeyondTheLimitIsRefusedWithItsReasonThenTheIdlestMakesRoom() throws {
        let rig = try Rig()
        defer { rig.remove() }
        let held = try (0..<3).map { _ in try rig.connect() }
        rig.clock.advance(by: .milliseconds(500))
        try held[1].send("pi")
        #expect(try rig.ask(held[2], "ping\n") == "pong\n")
        // Within their grace none of them may be hung up for another: the newcomer is told.
        let refused = try rig.connect()
        #expect(refused.read() == "busy: 3 connections, the limit\n")
        #expect(refused.read() == nil)
        #expect(rig.lines.events == [.refused(.full(connections: 3))])
        // After it, the longest idle makes room: the first (half a line is no claim to a place).
        rig.clock.advance(by: .seconds(1))
        try held[2].send("ping\n")
        rig.serve()
        let newcomer = try rig.connect()
        #expect(try rig.ask(newcomer, "ping\n") == "pong\n")
        #expect(held[0].read() == nil)
        #expect(held[1].read() == "")
        #expect(rig.lines.events == [.refused(.full(connections: 3)), .evicted])
    }

    @Test func aClientThatNeverReadsGetsOneAnswerAtATimeThenIsHungUp() throws {
        let rig = try Rig()
        defer { rig.remove() }
        let client = try rig.connect(receiveBuffer: 4_096)
        // A large answer the client never takes, then more requests than the input holds.
        try client.send("big 4000000\n" + String(repeating: "ping\n", count: 100))
        rig.serve()
        let connection = try #require(rig.server.connections.first)
        let answered = rig.lines.answered
        #expect(connection.hasOutput)
        // What the first read held was answered; the rest waits in the kernel, unread.
        #expect(answered == 11)
        #expect(connection.input.count <= Self.limits.inputBytes)
        rig.advance(through: .seconds(10)) {
            #expect(rig.server.connections.count == 1)
            #expect(connection.phase == .reading)
        }
        #expect(rig.server.connections.isEmpty)
        #expect(rig.lines.answered == answered)
    }

    @Test func partialFramesAreJoinedAndWholeOnesAnsweredInOrder() throws {
        let rig = try Rig()
        defer { rig.remove() }
        let client = try rig.connect()
        #expect(try rig.ask(client, "pi") == "")
        #expect(try rig.ask(client, "ng\nec") == "pong\n")
        #expect(try rig.ask(client, "ho one\nping\necho two\n") == "one\npong\ntwo\n")
    }

    @Test func aGarbledFrameGetsItsErrorAndEveryoneIsStillServed() throws {
        let rig = try Rig()
        defer { rig.remove() }
        let garbling = try rig.connect()
        let other = try rig.connect()
        try garbling.send([0x01, 0xFF, 0x7F, 0x0A])
        try other.send("ping\n")
        rig.serve()
        #expect(garbling.read() == "error: garbled line of 3 bytes\n")
        #expect(other.read() == "pong\n")
        #expect(try rig.ask(garbling, "ping\n") == "pong\n")
    }

    @Test func aRequestSentBeforeAHalfCloseIsAnswered() throws {
        let rig = try Rig()
        defer { rig.remove() }
        let client = try rig.connect()
        try client.send("ping\n")
        shutdown(client.socket.descriptor, Int32(SHUT_WR))
        rig.serve()
        #expect(client.read() == "pong\n")
        #expect(client.read() == nil)
        #expect(rig.server.connections.isEmpty)
    }

    @Test func aClosingConnectionIsDrainedUntilItsLingerEnds() throws {
        let rig = try Rig()
        defer { rig.remove() }
        let client = try rig.connect()
        #expect(try rig.ask(client, "quit\n") == "bye\n")
        #expect(client.read() == nil)
        // What it still sends is read and dropped, so it reads the answer rather than a reset.
        try client.send(String(repeating: "x", count: 1_000))
        rig.advance(through: .seconds(2)) { #expect(rig.server.connections.count == 1) }
        #expect(rig.server.connections.isEmpty)
    }

    @Test func aSlowStreamReaderGetsTheLatestMessagesAndOneFarBehindIsHungUp() throws {
        let rig = try Rig()
        defer { rig.remove() }
        let latest = try rig.connect()
        let behind = try rig.connect(receiveBuffer: 4_096)
        try latest.send("watch\n")
        try behind.send("watch\n")
        rig.serve()
        #expect(latest.read() == "watching\n")
        let streams = rig.server.connections.sorted { $0.id < $1.id }
        let dropped = (0..<10).map { streams[0].send(Array("m\($0)\n".utf8), keepingAtMost: 2) }.reduce(0, +)
        #expect(dropped == 8)
        // No idle deadline for a stream.
        rig.clock.advance(by: .seconds(600))
        rig.serve()
        #expect(latest.read() == "m8\nm9\n")
        streams[1].send([UInt8](repeating: 0x2E, count: 1_000_000))
        rig.serve()
        #expect(rig.server.connections.map(\.id) == [streams[0].id])
        #expect(rig.lines.events.contains { if case .fellBehind = $0 { true } else { false } })
    }

    @Test func anAlarmComesAtItsInstant() throws {
        let rig = try Rig()
        defer { rig.remove() }
        let client = try rig.connect()
        try client.send("alarm\n")
        rig.serve()
        rig.advance(through: .seconds(5)) { #expect(client.read() == "") }
        #expect(client.read() == "alarm\n")
    }

    @Test func runServesUntilStoppedThenHangsUpEveryone() throws {
        let rig = try Rig()
        defer { rig.remove() }
        let server = rig.server
        PosixThread.start(name: "poll-test") { [server = UncheckedBox(value: server)] in server.value.run() }
        let client = try UnixSocket.connect(to: rig.path)
        try client.write("ping\n")
        #expect(try client.readLine(limit: 100) == "pong")
        rig.handle.stop()
        #expect(try client.readLine(limit: 100) == nil)
    }
}

/// Hands the server to the thread that runs it; the test no longer touches it meanwhile.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
}

/// A listener in a temporary directory, a manual clock and a server with `Lines` as its protocol.
private final class Rig {
    let directory: TemporaryDirectory
    let path: String
    let listener: UnixSocket
    let clock = ManualTimekeeper()
    let handle: PollServerHandle
    let lines = Lines()
    let server: PollServer

    init(limits: PollServer.Limits = PollServerTests.limits) throws {
        directory = try TemporaryDirectory()
        path = directory.path + "/poll.sock"
        listener = try UnixSocket.listen(at: path, mode: 0o600)
        try listener.makeNonBlocking()
        handle = try PollServerHandle()
        server = PollServer(listener: listener.descriptor, limits: limits, timekeeper: clock, handle: handle, delegate: lines)
    }

    func remove() { directory.remove() }

    /// Advances to 1 ms before `span` has passed, serves and runs `before`; then the last
    /// millisecond, and serves.
    func advance(through span: Duration, before: () -> Void) {
        clock.advance(by: span - .milliseconds(1))
        serve()
        before()
        clock.advance(by: .milliseconds(1))
        serve()
    }

    /// What `client` has received once the server has served what it sent.
    func ask(_ client: Client, _ text: String) throws -> String? {
        try client.send(text)
        serve()
        return client.read()
    }

    /// A client admitted by the server.
    func connect(receiveBuffer: Int32? = nil) throws -> Client {
        let client = try Client(path: path, receiveBuffer: receiveBuffer)
        serve()
        return client
    }

    /// What is ready now, turn after turn (accepting, then reading, then writing), never waiting.
    func serve() {
        for _ in 0..<3 { server.turn(blocking: false) }
    }
}

/// A non-blocking client; `read` says what has arrived: "" nothing yet, nil the end of the stream.
private final class Client {
    let socket: UnixSocket

    init(path: String, receiveBuffer: Int32?) throws {
        socket = try UnixSocket.connect(to: path)
        if var size = receiveBuffer { setsockopt(socket.descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        try socket.makeNonBlocking()
    }

    func send(_ text: String) throws { try socket.write(text) }

    func send(_ bytes: [UInt8]) throws {
        #expect(try socket.sendAvailable(bytes[...]) == bytes.count)
    }

    func read() -> String? {
        var text: [UInt8] = []
        while true {
            guard let chunk = try? socket.receiveAvailable() else { return text.isEmpty ? nil : String(decoding: text, as: UTF8.self) }
            if chunk.isEmpty { return String(decoding: text, as: UTF8.self) }
            text += chunk
        }
    }
}

/// A line protocol: `ping` → `pong`, `echo X` → `X`, `big N` → N bytes, `watch` → a stream,
/// `quit` → `bye` and close, `alarm` → `alarm` 5 s later; a line of other than printable ASCII
/// gets an error and the connection goes on.
private final class Lines: PollServerDelegate {
    var closed = 0
    var answered = 0
    var events: [PollServer.Event] = []

    func opened(_ connection: PollConnection, on server: PollServer) {}

    func received(_ connection: PollConnection, on server: PollServer) {
        while connection.phase == .reading, let newline = connection.input.firstIndex(of: 0x0A) {
            let line = Array(connection.input[..<newline])
            connection.consume(newline + 1)
            answered += 1
            guard line.allSatisfy({ (0x20..<0x7F).contains($0) }) else {
                connection.send(Array("error: garbled line of \(line.count) bytes\n".utf8))
                continue
            }
            let text = String(decoding: line, as: UTF8.self)
            switch text {
            case "ping": connection.send(Array("pong\n".utf8))
            case "watch":
                connection.send(Array("watching\n".utf8))
                connection.stream()
            case "quit":
                connection.send(Array("bye\n".utf8))
                connection.close()
            case "alarm": connection.alarm = server.timekeeper.now + .seconds(5)
            case _ where text.hasPrefix("echo "): connection.send(Array(text.dropFirst(5).utf8) + [0x0A])
            case _ where text.hasPrefix("big "): connection.send([UInt8](repeating: 0x2E, count: Int(text.dropFirst(4)) ?? 0))
            default: connection.send(Array("error: unknown\n".utf8))
            }
        }
    }

    func requestTimedOut(_ connection: PollConnection, on server: PollServer) {
        connection.send(Array("error: no complete line within 5 s\n".utf8))
    }

    func alarm(_ connection: PollConnection, on server: PollServer) {
        connection.send(Array("alarm\n".utf8))
    }

    func closed(_ connection: PollConnection, on server: PollServer) { closed += 1 }

    func refusal(_ reason: PollServer.Refusal, on server: PollServer) -> [UInt8] {
        guard case .full(let count) = reason else { return Array("busy: out of resources\n".utf8) }
        return Array("busy: \(count) connections, the limit\n".utf8)
    }

    func collect(on server: PollServer) {}

    func report(_ event: PollServer.Event, on server: PollServer) { events.append(event) }
}
