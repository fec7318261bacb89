import Foundation
import Testing
import VendControl
import VendPOSIX
import VenddTestSupport

/// The control socket belongs to the vendd that answers on it: a second vendd given the same
/// path (with a state directory of its own, so the state lock does not stop it) must not take it
/// over, and a vendd stopping must not remove a socket file that is no longer its own.
@Suite(.oneRealProcessTestAtATime) struct ControlSocketOwnershipTests {
    @Test func aSecondVenddRefusesASocketALiveVenddAnswersOn() throws {
        let running = try DaemonHarness()
        defer { running.tearDown() }
        try running.start()
        try running.send(.restock(slot: "A1", count: 3))
        let pid = try #require(running.process?.processIdentifier)

        let second = try DaemonHarness()
        defer { second.tearDown() }
        let refused = try ProcessRun.run(
            builtProduct("vendd"),
            ["run", "--config", second.configPath, "--simulate", "--state-dir", second.stateDirectory, "--socket", running.socketPath])
        #expect(refused.status == 75, "\(refused.errors)")
        #expect(refused.errors.contains("control socket \(running.socketPath): process \(pid) ("), "\(refused.errors)")
        // Its command line names the state directory of the vendd that holds the socket.
        #expect(refused.errors.contains("--state-dir \(running.stateDirectory)"), "\(refused.errors)")
        #expect(refused.errors.contains("not starting"), "\(refused.errors)")

        // The running vendd still answers on its socket, with its stock.
        #expect(try running.status().slot("A1")?.stock == 3)
        #expect(try running.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: running.socketPath), "a clean stop removes its own socket")
    }

    @Test func aStaleSocketFileIsReplaced() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        // A socket file nobody listens on any more, as a crash leaves it.
        do { _ = try UnixSocket.listen(at: daemon.socketPath, mode: 0o600) }
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath))
        try daemon.start()
        #expect(try daemon.status().credit == "0")
        #expect(try daemon.stop() == 0)
    }

    @Test func aStoppingVenddLeavesASocketThatIsNotItsOwn() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        // Someone else's socket now sits at the path (a newer vendd after the file was removed).
        unlink(daemon.socketPath)
        let other = try UnixSocket.listen(at: daemon.socketPath, mode: 0o600)
        #expect(try daemon.stop() == 0)
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath), "vendd removed a socket file that was not its own")
        #expect((try? UnixSocket.connect(to: daemon.socketPath)) != nil, "its listener no longer answers")
        withExtendedLifetime(other) {}
    }
}
