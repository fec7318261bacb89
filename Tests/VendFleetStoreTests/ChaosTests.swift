import Foundation
import Testing
import VendFleetStore
import VenddTestSupport

/// The fleet store's chaos cases: while simulated machines stream events and send again what
/// stays unacknowledged (vendstore-load), a part of the path is killed, again and again; at the
/// end every event is stored exactly once, without a gap. Each prints one count line
/// ("chaos: <case>: kills N, events N, stored N, lost 0, duplicated 0"); the environment scales
/// each up for a note's run (VENDSTORE_CHAOS_KILLS and the others below; VENDSTORE_CHAOS_SEED).
@Suite("vendstore chaos", .serialized, .timeLimit(.minutes(2)))
struct ChaosTests {
    /// vendstore SIGKILLed between receipt and commit. libmosquitto has PUBACKed each killed batch
    /// to the broker, so only the end-to-end acknowledgement brings those events back.
    /// VENDSTORE_CHAOS_KILLS (default 10) sets the number of kills; the note's run used 100+.
    @Test func killedBetweenReceiptAndCommitItLosesAndDuplicatesNothing() throws {
        let kills = chaosSetting("VENDSTORE_CHAOS_KILLS", 10)
        let rig = try StoreProcessRig()
        defer { rig.tearDown() }
        let load = try ChaosLoad(rig, eventsPerMachine: 30 * kills / 10 + 20)
        defer { load.stop() }
        var generator = chaosGenerator()
        let (killed, stubborn) = try killBeforeCommits(rig, kills, using: &generator)
        try rig.startStore()
        try load.waitUntilAcknowledged()
        rig.stopStore()
        #expect(killed == kills)
        try load.expectExactlyOnce(
            in: rig.openStore(), case: "vendstore killed between receipt and commit", kills: "\(killed) (extra kills \(stubborn))")
    }

    /// The broker SIGKILLed mid-stream and started again on its port: its sessions, queues and
    /// retained acks are what its persistence had saved (at most), and the resends bring back the rest.
    /// VENDSTORE_CHAOS_BROKER_KILLS (default 3).
    @Test func brokerKilledMidStreamItLosesAndDuplicatesNothing() throws {
        let kills = chaosSetting("VENDSTORE_CHAOS_BROKER_KILLS", 3)
        let rig = try StoreProcessRig()
        defer { rig.tearDown() }
        try rig.startStore()
        let load = try ChaosLoad(rig, eventsPerMachine: 20 + 10 * kills)
        defer { load.stop() }
        var generator = chaosGenerator()
        for _ in 0..<kills {
            usleep(UInt32.random(in: 300_000...700_000, using: &generator))
            rig.broker.kill()
            usleep(UInt32.random(in: 50_000...300_000, using: &generator))
            try rig.broker.start()
        }
        try load.waitUntilAcknowledged()
        #expect(rig.process()?.isRunning == true, "vendstore ended:\n\(rig.log)")
        rig.stopStore()
        #expect(rig.log.contains("lost the broker"))
        try load.expectExactlyOnce(in: rig.openStore(), case: "broker killed mid-stream", kills: "\(kills)")
    }
}

/// Launches vendstore `instance` again and again with VENDSTORE_TEST_KILL_BEFORE_COMMIT (it
/// SIGKILLs itself before committing its 1st, 2nd or 3rd batch) until it has died so `kills`
/// times: the kills, and the lives killed by the test instead (nothing arrived in 5 s).
func killBeforeCommits(_ rig: StoreProcessRig, _ kills: Int, instance: Int = 0, using generator: inout SplitMix64) throws -> (Int, Int) {
    var killed = 0, stubborn = 0
    while killed < kills, stubborn <= 3 {
        let batch = Int.random(in: 1...3, using: &generator)
        try rig.launchStore(instance: instance, environment: ["VENDSTORE_TEST_KILL_BEFORE_COMMIT": "\(batch)"])
        let pid = rig.process(instance)!.pid
        let deadline = Date().addingTimeInterval(5)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0, Date() < deadline { usleep(5_000) }
        if Date() >= deadline {
            stubborn += 1
            rig.stopStore(SIGKILL, instance: instance)
        } else {
            rig.storeEnded(instance: instance)
            #expect((status & 0x7f) == SIGKILL, "vendstore ended otherwise than by its own SIGKILL: status \(status)\n\(rig.log(of: instance))")
            killed += 1
        }
    }
    return (killed, stubborn)
}
