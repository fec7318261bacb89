import Foundation
import Testing
import VendFleetStore
import VenddTestSupport

extension ChaosTests {
    /// PostgreSQL crashed (`pg_ctl -m immediate`: every server process quits at once) and started
    /// again mid-stream, on a cluster of the test's own: vendstore keeps running, retries its commit until the server is back,
    /// and acknowledges nothing before. VENDSTORE_CHAOS_POSTGRES_KILLS (default 3).
    @Test func postgresqlCrashedMidStreamItLosesAndDuplicatesNothing() throws {
        let kills = chaosSetting("VENDSTORE_CHAOS_POSTGRES_KILLS", 3)
        let cluster = try PostgresCluster()
        defer {
            cluster.stop()
            cluster.remove()
        }
        let rig = try StoreProcessRig(postgresql: cluster.createDatabase())
        defer { rig.tearDown() }
        try rig.startStore()
        let load = try ChaosLoad(rig, eventsPerMachine: 20 + 10 * kills)
        defer { load.stop() }
        var generator = chaosGenerator()
        for _ in 0..<kills {
            usleep(UInt32.random(in: 300_000...700_000, using: &generator))
            cluster.crash()
            usleep(UInt32.random(in: 100_000...500_000, using: &generator))
            try cluster.start()
        }
        try load.waitUntilAcknowledged()
        #expect(rig.process()?.isRunning == true, "vendstore ended:\n\(rig.log)")
        rig.stopStore()
        // The retries name the database (never its password), so the operator knows which to look at.
        #expect(rig.log.contains("events into postgresql t"), "\(rig.log)")
        #expect(rig.log.contains("on 127.0.0.1:\(cluster.port) (attempt 1); retrying"), "\(rig.log)")
        #expect(rig.log.contains("on 127.0.0.1:\(cluster.port) takes commits again after"), "\(rig.log)")
        try load.expectExactlyOnce(in: rig.openStore(), case: "PostgreSQL crashed mid-stream", kills: "\(kills)")
    }

    /// Two vendstores on one PostgreSQL sharing the subscription (`shared_group`): the second is
    /// SIGKILLed between receipt and commit again and again and started again, the first runs on.
    /// VENDSTORE_CHAOS_SHARED_KILLS (default 4).
    @Test func oneOfTwoSharingIngestersKilledItLosesAndDuplicatesNothing() throws {
        let kills = chaosSetting("VENDSTORE_CHAOS_SHARED_KILLS", 4)
        let rig = try StoreProcessRig(postgresql: PostgresCluster.running().createDatabase(), sharedGroup: "stores")
        defer { rig.tearDown() }
        try rig.startStore(instance: 0)
        let load = try ChaosLoad(rig, eventsPerMachine: 20 + 10 * kills)
        defer { load.stop() }
        var generator = chaosGenerator()
        // Each of these lives died on a batch of its own: the broker shared the messages.
        let (killed, stubborn) = try killBeforeCommits(rig, kills, instance: 1, using: &generator)
        try rig.startStore(instance: 1)
        try load.waitUntilAcknowledged()
        #expect(rig.process(0)?.isRunning == true, "vendstore 0 ended:\n\(rig.log(of: 0))")
        for instance in 0...1 {
            #expect(rig.log(of: instance).contains("subscriptions=$share/stores/vendd/+/events/#"), "\(rig.log(of: instance))")
        }
        rig.stopStore(instance: 0)
        rig.stopStore(instance: 1)
        #expect(killed == kills)
        try load.expectExactlyOnce(in: rig.openStore(), case: "one of two sharing vendstores killed", kills: "\(killed) (extra kills \(stubborn))")
    }
}
