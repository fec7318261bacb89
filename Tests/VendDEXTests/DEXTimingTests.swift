import DEXHandheld
import Foundation
import Testing
import VendDEX
import VendDrivers
import VendPOSIX
import VendSettings
import VendTime
import VenddTestSupport

/// The minimum waits of EVA-DTS 6.1.1, never short: DEX/UCS "the responding unit should wait a
/// minimum of 10 milliseconds before answering back" and "the initiating device should pause a
/// minimum of 100 milliseconds" before the second and third sessions (p.114); DDCMP "Minimum turn
/// around time in the receiver 40ms" (table 2, p.64; §3.7.3: "it must allow a period of time
/// after the end of the last reception to ensure that it does not transmit before the receivers
/// at the other end are ready").
@Suite(.serialized) struct DEXTimingTests {
    /// The port on manual time over a socket: the handheld's bytes come in at fractions of a
    /// millisecond, and at no instant before the minimum has passed does an answer go out.
    @Test func anAnswerNeverPrecedesTheMinimumOnManualTime() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let listener = try UnixSocket.listen(at: directory.path + "/dex.sock", mode: 0o600)
        let clock = ManualTimekeeper()
        let port = DEXPort(
            settings: DEXSettings(
                port: "unix:" + directory.path + "/dex.sock", baudRate: 9_600, communicationID: "VDD0000001", assetNumber: "VM-1",
                machineMakesFirstHandshake: false, origin: ConfigOrigin(location: .init(file: "t.yaml", line: 1, column: 1), path: "dex")),
            timekeeper: clock, handlers: DEXPortSocketTests.Machine().handlers)
        port.start()
        let handheld = try #require(listener.accept())
        try handheld.makeNonBlocking()
        var elapsed = Duration.zero
        /// Manual time to `milliseconds` since the port opened; what the port then wrote (real
        /// time enough for its thread to notice).
        func at(_ milliseconds: Double) throws -> [UInt8] {
            let target = Duration.microseconds(Int64((milliseconds * 1_000).rounded()))
            clock.advance(by: target - elapsed)
            elapsed = target
            usleep(30_000)
            return try handheld.receiveAvailable() ?? []
        }
        func send(_ bytes: [UInt8]) throws {
            _ = try handheld.sendAvailable(bytes[...])
            usleep(30_000)
        }

        // ENQ at 0.6 ms: the ACK0 not before 10.6 ms.
        #expect(try at(0.6).isEmpty)
        try send([0x05])
        for instant in [5.0, 9.9, 10.0, 10.5, 10.59] {
            #expect(try at(instant).isEmpty, "the ACK0 went out at \(instant) ms, \(instant - 0.6) ms after the ENQ")
        }
        #expect(try at(11.0) == [0x10, 0x30])
        // The first handshake at 20.3 ms: its ACK1 not before 30.3 ms.
        #expect(try at(20.3).isEmpty)
        try send(DEXBlock(kind: .handshake, payload: Array("HHD0000001RR00L06".utf8), isLast: true).bytes)
        #expect(try at(30.29).isEmpty, "the ACK1 before 10 ms")
        #expect(try at(31.0) == [0x10, 0x31])
        // The handheld's EOT at 40.7 ms ends the first session: the machine's ENQ not before 140.7.
        #expect(try at(40.7).isEmpty)
        try send([0x04])
        for instant in [100.0, 140.0, 140.69] {
            #expect(try at(instant).isEmpty, "the second handshake began \(instant - 40.7) ms after the EOT")
        }
        #expect(try at(141.0) == [0x05])
        await port.stop()
    }

    /// The same on real time, over a socket against the handheld written from the specification:
    /// every answer at least 10 ms after what the handheld sent, every session the machine starts
    /// at least 100 ms after the EOT before it; a pause in the dozens of reads that follow.
    ///
    /// A session's pause runs from the machine's EOT to its ENQ, both timed by the handheld as it
    /// reads them (a Unix stream socket has no kernel receive stamps): a handheld thread that reads
    /// the EOT late sees the pause short (97.6 ms once, CI under load). So each pause may fall
    /// short of 100 ms by the handheld's own reading latency, `readingSlack`, and their median may
    /// not: the exact instants are the manual-time test's above.
    @Test func DEXUCSWaitsAreNeverShortOnRealTime() async throws {
        let (handheld, port, machine, directory) = try DEXPortSocketTests.rig()
        defer { directory.remove() }
        for _ in 0..<8 { #expect(handheld.read() == .audit(String(decoding: DEXPortSocketTests.audit, as: UTF8.self))) }
        #expect(machine.wait(.delivered, count: 8).count == 8)
        let gaps = handheld.gaps
        let answers = gaps.filter { $0.after.hasPrefix("handheld") && $0.heard != "ENQ" }
        let sessions = gaps.filter { $0.heard == "ENQ" && $0.after.hasSuffix("EOT") }
        #expect(answers.count >= 8 * 8 && sessions.count == 8 * 2, "\(gaps)")
        #expect(answers.filter { $0.gap < .milliseconds(10) }.isEmpty)
        let readingSlack = Duration.milliseconds(5)
        #expect(sessions.filter { $0.gap < .milliseconds(100) - readingSlack }.isEmpty, "\(sessions)")
        let pauses = sessions.map(\.gap).sorted()
        #expect(pauses.isEmpty || pauses[pauses.count / 2] >= .milliseconds(100), "\(pauses)")
        await port.stop()
    }

    @Test func DDCMPWaitsAreNeverShortOnRealTime() async throws {
        let (master, port, machine, directory) = try DDCMPPortSocketTests.rig()
        defer { directory.remove() }
        for _ in 0..<4 { #expect(master.read() == .audit(DDCMPPortSocketTests.audit)) }
        #expect(machine.wait(.delivered, count: 4).count == 4)
        let answers = master.gaps.filter { $0.after.hasPrefix("handheld") }
        #expect(answers.count >= 4 * 6, "\(master.gaps)")
        #expect(answers.filter { $0.gap < .milliseconds(40) }.isEmpty)
        await port.stop()
    }
}
