import Foundation
import Testing
import VendControl
import VenddTestSupport

/// A hostile local user: thousands of connections from one user under `ulimit -n 1024`, clients
/// that send half a line and stop, garbage and oversized lines. During the attack a technician's
/// `status` is always answered (the status, or `busy` now and then) within 5 s, half vendctl's
/// patience (a loaded 2-core test machine answered in 2.8 s); once it ends,
/// within a second; the books do not move. Run twice, one after the other: vendd with more
/// descriptors than it needs, and with so few that accepting fails with EMFILE (the accept loop
/// must survive it).
@Suite(.oneRealProcessTestAtATime) struct HostileClientTests {
    @Test(arguments: [1_024, 48])
    func thousandsOfConnectionsSlowClientsAndGarbageLeaveVenddAnswering(venddOpenFiles: Int) throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start(openFileLimit: venddOpenFiles)
        try daemon.send(.restock(slot: "all", count: nil))
        try daemon.send(.sim(.coin(amount: "500")))
        let before = try daemon.status()

        let attacker = Process()
        attacker.executableURL = URL(fileURLWithPath: "/bin/sh")
        attacker.arguments = [
            "-c", "ulimit -n 1024 && exec python3 \"$0\" \"$1\"",
            repositoryRoot.appendingPathComponent("scripts/hostile-clients.py").path, daemon.socketPath,
        ]
        let report = Pipe()
        attacker.standardOutput = report
        try attacker.run()

        // A technician asks every 200 ms while the attack runs: each answered within `patience`
        // (busy is an answer too, but only now and then).
        let patience: Duration = .seconds(5)
        var slowest: Duration = .zero
        var asked = 0, busy = 0
        var failures: [String] = []
        while attacker.isRunning {
            let started = ContinuousClock.now
            let answer: ControlResponse?
            do {
                answer = try ControlClient(path: daemon.socketPath, timeout: patience).send(.status)
            } catch {
                answer = nil
                failures.append("\(error)")
            }
            let took = ContinuousClock.now - started
            slowest = max(slowest, took)
            asked += 1
            if answer?.error?.code == .busy { busy += 1 }
            if let answer, !(answer.ok || answer.error?.code == .busy) || took >= patience {
                failures.append("\(answer.error?.message ?? "answered") after \(took)")
            }
            usleep(200_000)
        }
        #expect(failures.isEmpty, "\(failures.count) of \(asked) status requests failed or were slow: \(failures.prefix(3))")
        #expect(busy * 10 <= asked, "\(busy) of \(asked) status requests were told busy")
        attacker.waitUntilExit()
        let summary = String(decoding: report.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(attacker.terminationStatus == 0, "the attacker failed: \(summary)")
        let connected = Int(summary.firstMatch(of: /(\d+) connected/)?.1 ?? "") ?? 0
        #expect(connected >= 2_000, "only \(connected) connections: \(summary)")

        // After the attack: answered at once, and nothing changed.
        let started = ContinuousClock.now
        let after = try daemon.status()
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(after.books == before.books)
        #expect(after.credit == before.credit)
        #expect(after.slots.map(\.stock) == before.slots.map(\.stock), "an attacker's restock went through")
        print(
            "hostile clients (vendd under ulimit -n \(venddOpenFiles)): \(summary.trimmingCharacters(in: .whitespacesAndNewlines)); \(asked) status requests during the attack (\(busy) busy), slowest \(slowest)"
        )
        if venddOpenFiles < 64 {
            #expect(daemon.log.contains("cannot accept a client"), "EMFILE was never hit")
        }
        #expect(try daemon.stop() == 0)
    }
}
