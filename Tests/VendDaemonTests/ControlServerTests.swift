import Foundation
import Logging
import Testing
import VendControl
import VendPOSIX
import VendTime
import VenddTestSupport

@testable import VendDaemon

/// The control socket on its own thread with a manual clock: the test advances time, and learns
/// that the server has looked at it from an answer (a turn that answers has judged every deadline
/// at the clock's time), so nothing sleeps.
@Suite(.timeLimit(.minutes(5))) struct ControlServerTests {
    @Test func aHalfLineIsAnsweredAndClosedFiveSecondsAfterItsFirstByte() throws {
        let rig = try Rig()
        defer { rig.stop() }
        let half = try rig.connect()
        rig.clock.advance(by: .seconds(30))
        try half.write(#"{"v":1,"op":"sta"#)
        try rig.settle()
        // More bytes are activity, not a new start.
        rig.clock.advance(by: .seconds(4))
        try half.write("tu")
        rig.clock.advance(by: .milliseconds(999))
        try rig.settle()
        #expect(rig.isOpen(half))
        rig.clock.advance(by: .milliseconds(1))
        let answer = try #require(try half.readLine(limit: 4_096))
        #expect(answer.contains("no complete request line within 5 s; closing"))
        #expect(try half.readLine(limit: 4_096) == nil)
    }

    @Test func anIdleClientIsHungUpAfterSixtySecondsAndNotBefore() throws {
        let rig = try Rig()
        defer { rig.stop() }
        let idle = try rig.connect()
        try rig.settle()
        rig.clock.advance(by: .seconds(60) - .milliseconds(1))
        try rig.settle()
        #expect(rig.isOpen(idle))
        rig.clock.advance(by: .milliseconds(1))
        #expect(try idle.readLine(limit: 4_096) == nil)
    }

    @Test func aGarbledLineGetsItsErrorAndTheServerServesOn() throws {
        let rig = try Rig()
        defer { rig.stop() }
        let client = try rig.connect()
        try client.write("\u{0}\u{ff} garbage\n")
        let refused = try ControlResponse.decode(#require(try client.readLine(limit: 4_096)))
        #expect(refused.error?.code == .badRequest)
        try client.write(ControlRequest.line(.status))
        #expect(try ControlResponse.decode(#require(try client.readLine(limit: 4_096))) == .success("answered status"))
        #expect(try ControlClient(path: rig.path).send(.status) == .success("answered status"))
    }

    @Test func aLineLongerThanTheLimitIsRefusedAndClosed() throws {
        let rig = try Rig()
        defer { rig.stop() }
        let client = try rig.connect()
        try client.write(String(repeating: "x", count: ControlProtocol.maximumRequestBytes + 10) + "\n")
        let refused = try ControlResponse.decode(#require(try client.readLine(limit: 4_096)))
        #expect(refused.error == ControlError(.badRequest, "request longer than \(ControlProtocol.maximumRequestBytes) bytes"))
        #expect(try client.readLine(limit: 4_096) == nil)
    }

    @Test func clientsBeyondTheLimitAreToldBusyUntilOneMayGiveWay() throws {
        var limits = ControlServer.Limits()
        limits.clients = 2
        let rig = try Rig(limits: limits)
        defer { rig.stop() }
        // Each answered, so each was admitted at the clock's time; the second one later.
        let held = try (0..<2).map { _ in try rig.connect() }
        for client in held {
            try client.write(ControlRequest.line(.status))
            _ = try client.readLine(limit: 4_096)
            rig.clock.advance(by: .milliseconds(100))
        }
        // Both within their grace: the newcomer is told why.
        let refused = try rig.connect()
        let busy = try ControlResponse.decode(#require(try refused.readLine(limit: 4_096)))
        #expect(busy.error == ControlError(.busy, "vendd is serving 2 clients, its limit; try again in a moment"))
        // After it, the longest idle (the first) gives way.
        rig.clock.advance(by: .milliseconds(50))
        #expect(try ControlClient(path: rig.path).send(.status) == .success("answered status"))
        #expect(try held[0].readLine(limit: 4_096) == nil)
    }

    @Test func aWatcherIsNeverIdleAndWatchersHaveTheirLimit() throws {
        var limits = ControlServer.Limits()
        limits.watchers = 1
        let rig = try Rig(limits: limits)
        defer { rig.stop() }
        let watcher = try rig.connect()
        try watcher.write(ControlRequest.line(.watch))
        #expect(try ControlResponse.decode(#require(try watcher.readLine(limit: 4_096))) == .success("watching; one line per event"))
        let second = try rig.connect()
        try second.write(ControlRequest.line(.watch))
        let busy = try ControlResponse.decode(#require(try second.readLine(limit: 4_096)))
        #expect(busy.error?.code == .busy)
        #expect(try second.readLine(limit: 4_096) == nil)
        rig.clock.advance(by: .seconds(600))
        try rig.settle()
        #expect(rig.isOpen(watcher))
    }
}

/// A control server in a temporary directory on a manual clock; its handler answers every
/// request with "answered COMMAND".
private final class Rig {
    let directory: TemporaryDirectory
    let path: String
    let clock = ManualTimekeeper()
    let server: ControlServer

    init(limits: ControlServer.Limits = ControlServer.Limits()) throws {
        directory = try TemporaryDirectory()
        path = directory.path + "/control.sock"
        server = try ControlServer(
            path: path, logger: Logger(label: "test"), timekeeper: clock, handler: { request, _ in .success("answered \(request.command)") },
            events: EventFanOut(logger: Logger(label: "test")), limits: limits)
        server.start()
    }

    func stop() {
        server.stop()
        directory.remove()
    }

    /// A client that gives up waiting for an answer after 10 s of real time (the server is stuck).
    func connect() throws -> UnixSocket {
        let socket = try UnixSocket.connect(to: path)
        socket.setTimeout(.seconds(10))
        return socket
    }

    /// Returns once the server has read what every client sent before, at the clock's time: two
    /// requests answered one after the other (a client accepted in the first one's turn is read
    /// in the second's at the latest).
    func settle() throws {
        for _ in 0..<2 { #expect(try ControlClient(path: path).send(.status) == .success("answered status")) }
    }

    /// Neither closed nor answered: nothing to read yet.
    func isOpen(_ socket: UnixSocket) -> Bool {
        (try? socket.receiveAvailable()) == []
    }
}

extension ControlRequest {
    static func line(_ command: ControlCommand) throws -> String {
        String(decoding: try JSONEncoder().encode(ControlRequest(command)), as: UTF8.self) + "\n"
    }
}

extension ControlResponse {
    static func decode(_ line: String) throws -> ControlResponse {
        try JSONDecoder().decode(ControlResponse.self, from: Data(line.utf8))
    }
}
