import Foundation
import SocketPlug
import Synchronization
import VendPOSIX

/// The handheld's end of the DEX cable on a Unix socket, shared by the DEX/UCS and the DDCMP
/// handhelds: the machine connects, a session's script runs on that connection, and the cable
/// can be pulled and plugged in again.
final class HandheldSocket: Sendable {
    private let plug: SocketPlug
    private let client = Mutex<UnixSocket?>(nil)
    private let log = Mutex<[String]>([])
    private let measured = Mutex<[TimingGap]>([])
    private let report: @Sendable (String) -> Void

    init(socketPath: String, threadName: String, report: @escaping @Sendable (String) -> Void) throws {
        self.report = report
        plug = SocketPlug(socketPath: socketPath, threadName: threadName, report: report)
        try plug.plug { [weak self] socket in self?.serve(socket) }
    }

    deinit { plug.unplug() }

    /// Every byte exchanged so far, as the handheld saw it.
    var transcript: [String] { log.withLock { $0 } }
    /// Every wait of the machine's measured so far (see `HandheldLine.gaps`).
    var gaps: [TimingGap] { measured.withLock { $0 } }

    func waitForMachine(timeout: Duration = .seconds(10)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if client.withLock({ $0 != nil }) { return true }
            usleep(10_000)
        }
        return false
    }

    func replug() throws { try plug.replug() }

    /// Runs `body` on the machine's connection and keeps its transcript; nil: no machine came.
    func session<Outcome>(_ body: (HandheldLine) -> Outcome) -> Outcome? {
        guard waitForMachine(), let socket = client.withLock({ $0 }) else { return nil }
        let line = HandheldLine(socket: socket)
        let outcome = body(line)
        log.withLock { $0 += line.transcript + ["outcome: \(outcome)"] }
        measured.withLock { $0 += line.gaps }
        report("session: \(outcome)")
        return outcome
    }

    /// The cable comes out: the machine's connection drops and the socket goes away.
    func pull() {
        client.withLock { $0 = nil }
        plug.unplug()
    }

    /// Keeps the connection until the machine hangs up or the cable is pulled.
    private func serve(_ socket: UnixSocket) {
        client.withLock { $0 = socket }
        defer { client.withLock { if $0 === socket { $0 = nil } } }
        // POLLRDHUP (Linux, 0x2000) is behind _GNU_SOURCE, which Glibc's Swift module leaves out.
        let peerHungUp: Int16 = 0x2000
        while client.withLock({ $0 === socket }) {
            var descriptor = pollfd(fd: socket.descriptor, events: peerHungUp, revents: 0)
            if poll(&descriptor, 1, 100) > 0, descriptor.revents & (peerHungUp | Int16(POLLHUP | POLLERR | POLLNVAL)) != 0 { return }
        }
    }
}
