import Foundation
import Testing
import VendFleetStore
import VenddTestSupport

/// vendstore SIGKILLed between receipt and commit, again and again, while simulated machines
/// stream events and send again what stays unacknowledged: at the end every event is stored
/// exactly once, without a gap. libmosquitto has PUBACKed each killed batch to the broker, so
/// only the end-to-end acknowledgement brings those events back.
///
/// VENDSTORE_CHAOS_KILLS (default 10) sets the number of kills; the note's run used 100+.
@Suite("vendstore chaos", .serialized, .timeLimit(.minutes(2)))
struct ChaosTests {
    @Test func killedBetweenReceiptAndCommitItLosesAndDuplicatesNothing() throws {
        let kills = Int(ProcessInfo.processInfo.environment["VENDSTORE_CHAOS_KILLS"] ?? "") ?? 10
        let machines = 20
        let eventsPerMachine = 30 * kills / 10 + 20
        let rig = try StoreProcessRig()
        defer { rig.tearDown() }
        let loadLog = rig.directory.path + "/load.log"
        // Steady streaming (about 40 ms of events per batch) so that every life of vendstore receives some.
        let load = try ChildProcess(
            builtProduct("vendstore-load"),
            [
                "--broker", rig.broker.url, "--machines", "\(machines)", "--events-per-machine", "\(eventsPerMachine)",
                "--rate", "400", "--resend-milliseconds", "1000", "--timeout-seconds", "600",
            ], output: loadLog, errors: loadLog)
        defer { load.stop(SIGKILL) }

        var killed = 0, stubborn = 0
        var generator = SplitMix64(seed: UInt64(ProcessInfo.processInfo.environment["VENDSTORE_CHAOS_SEED"] ?? "") ?? 37)
        while killed < kills {
            let batch = Int.random(in: 1...3, using: &generator)
            try rig.launchStore(environment: ["VENDSTORE_TEST_KILL_BEFORE_COMMIT": "\(batch)"])
            let pid = rig.process!.pid
            let deadline = Date().addingTimeInterval(5)
            var status: Int32 = 0
            while waitpid(pid, &status, WNOHANG) == 0, Date() < deadline { usleep(5_000) }
            if Date() >= deadline {
                // Nothing arrived in 5 s (the stream ended): kill it ourselves, and say so.
                stubborn += 1
                rig.stopStore(SIGKILL)
            } else {
                rig.storeEnded()
                #expect((status & 0x7f) == SIGKILL, "vendstore ended otherwise than by its own SIGKILL: status \(status)\n\(rig.log)")
                killed += 1
            }
            if stubborn > 3 { break }
        }
        try rig.startStore()
        try waitUntil("the machines' outboxes are empty", timeout: 120) { !load.isRunning }
        rig.stopStore()

        let store = try SQLiteFleetStore(path: rig.databasePath, now: 0)
        var stored = 0, lost = 0, duplicated = 0
        for number in 1...machines {
            let name = "m" + String(repeating: "0", count: 5 - String(number).count) + String(number)
            let events = try store.events(of: name, from: 1, limit: eventsPerMachine * 2)
            stored += events.count
            let seqs = Set(events.map(\.seq))
            lost += eventsPerMachine - seqs.intersection(1...Int64(eventsPerMachine)).count
            duplicated += events.count - Set(events.map(\.id)).count
        }
        let summary = (try? String(contentsOfFile: loadLog, encoding: .utf8)) ?? ""
        print(
            "chaos: kills \(killed) (between receipt and commit), extra kills \(stubborn), events \(machines * eventsPerMachine), stored \(stored), lost \(lost), duplicated \(duplicated); load: \(summary)"
        )
        #expect(killed == kills)
        #expect(stored == machines * eventsPerMachine)
        #expect(lost == 0)
        #expect(duplicated == 0)
        #expect(try store.gaps().isEmpty)
        #expect(try store.progress().allSatisfy { $0.contiguous == Int64(eventsPerMachine) })
    }
}
