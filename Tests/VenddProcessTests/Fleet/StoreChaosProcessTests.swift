import Foundation
import Testing
import VendControl
import VendFleetStore
import VenddTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The fleet store's chaos case with the real machine: vendd (simulated hardware,
/// `keep_until_stored`) and vendstore (SQLite) on the ACL'd broker; a burst of sales driven by
/// `vendctl sim`, vendd SIGKILLed in the middle of it (coins taken, their events not yet
/// acknowledged: the store stalls for them) and started again. At the end the store holds every event once, without a gap, and the
/// machine's cash and stock as `vendctl status --json` reports them.
@Suite(.oneRealProcessTestAtATime) struct StoreChaosProcessTests {
    /// The slots priced 1,500원: three 500원 coins buy one.
    static let slots = ["A4", "A5", "B4"]

    /// VENDSTORE_CHAOS_VENDD_KILLS (default 2) kills spread over VENDSTORE_CHAOS_VENDD_SALES (default 8) sales.
    @Test func venddKilledMidBurstTheStoreHoldsEveryEventOnceAndTheMachinesBooks() throws {
        let environment = ProcessInfo.processInfo.environment
        let kills = Int(environment["VENDSTORE_CHAOS_VENDD_KILLS"] ?? "") ?? 2
        let sales = max(Int(environment["VENDSTORE_CHAOS_VENDD_SALES"] ?? "") ?? 8, kills + 1)
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let store = VendstoreProcess(configPath: rig.directory.path + "/vendstore.yaml", logPath: rig.directory.path + "/vendstore.log")
        defer { store.stop(SIGKILL) }
        let database = rig.directory.path + "/fleet.db"
        try store.start(
            config: """
                mqtt:
                  broker: \(rig.broker.url)
                  ca_file: \(rig.broker.caFile)
                  credentials_file: \(try rig.broker.credentialsFile(for: MosquittoBroker.storeUser))
                  client_id: vendstore-test
                database:
                  sqlite: \(database)
                ingest:
                  ack_milliseconds: 20

                """)
        let daemon = try rig.machine("m1", keepUntilStored: true)
        try daemon.start()
        try daemon.requireSuccess(daemon.vendctl("restock", "all"))

        let killAt = Set((1...kills).map { sales * $0 / (kills + 1) })
        var waitingAtKills: [Int] = []
        for sale in 0..<sales {
            let slot = Self.slots[sale % Self.slots.count]
            let before = try daemon.status()
            if before.slot(slot)?.stock == 0 { try daemon.requireSuccess(daemon.vendctl("restock", "all")) }
            let kill = killAt.contains(sale)
            // The store stalls (SIGSTOP) for the coins before a kill: their events surely await it then.
            let storePID = try #require(store.process?.pid)
            if kill { Glibc.kill(storePID, SIGSTOP) }
            for _ in 0..<3 { try daemon.requireSuccess(daemon.vendctl("sim", "coin", "500")) }
            if kill {
                // Mid-burst: the credit is journaled, its events are at most at the broker.
                waitingAtKills.append(try daemon.status().fleetOutbox?.pending ?? 0)
                daemon.signal(SIGKILL)
                _ = try daemon.waitForExit()
                try daemon.start()
                Glibc.kill(storePID, SIGCONT)
            }
            try daemon.requireSuccess(daemon.vendctl("sim", "press", slot))
            _ = try daemon.waitUntil("sale \(sale + 1)") { $0.books.itemsSold == before.books.itemsSold + 1 && $0.vendInProgress == nil }
        }

        // The route driver empties the cash box: the collection reaches the store's tables too.
        try daemon.requireSuccess(daemon.vendctl("service", "on"))
        let collecting = try daemon.vendctl("cash", "collect", "--json")
        let collected = try #require(try JSONDecoder().decode(ControlResponse.self, from: Data(collecting.output.utf8)).collection)
        try daemon.requireSuccess(daemon.vendctl("service", "off"))

        let acknowledged = try daemon.waitUntil("the store acknowledges every event", timeout: 30) {
            $0.fleetOutbox?.pending == 0 && $0.fleetOutbox?.storedSeq != nil && $0.fleetOutbox?.storedSeq == $0.fleetOutbox?.lastSeq
        }
        let last = try #require(acknowledged.fleetOutbox?.lastSeq)
        // What the technician sees: `vendctl status --json` is {"status": <the status report>}.
        struct Answer: Decodable { let status: StatusReport }
        let status = try JSONDecoder().decode(Answer.self, from: Data(daemon.vendctl("status", "--json").output.utf8)).status
        let fleet = try SQLiteFleetStore(path: database, now: 0)
        // The retained cash and stock follow the last sale by a moment.
        let expectedCash = (status.currency, status.books.coinsIn, status.books.sales, status.books.refunds)
        let expectedSlots = status.slots.map {
            SlotPosition(
                slot: $0.id, product: $0.product, price: $0.price, available: Int64($0.available), stock: Int64($0.stock),
                capacity: Int64($0.capacity), earliestExpiry: $0.earliestExpiry)
        }
        func caughtUp() throws -> Bool {
            let cash = try fleet.cash(of: "m1")
            return try fleet.slots(of: "m1") == expectedSlots && cash.map { ($0.currency, $0.coinsIn, $0.sales, $0.refunds) == expectedCash } == true
        }
        let deadline = Date().addingTimeInterval(10)
        while try !caughtUp(), Date() < deadline { usleep(50_000) }
        let cash = try #require(try fleet.cash(of: "m1"), "no machine_cash row:\n\(store.log)")
        #expect(cash.currency == status.currency && cash.coinsIn == status.books.coinsIn && cash.sales == status.books.sales)
        #expect(cash.refunds == status.books.refunds && cash.billsIn == status.books.billsIn && cash.changePaid == status.books.changePaid)
        #expect(try fleet.slots(of: "m1") == expectedSlots)
        #expect(status.books.itemsSold == sales && status.books.coinsIn == "\(sales * 1500)")

        let events = try fleet.events(of: "m1", from: 1, limit: Int(last) * 2)
        let lost = Int(last) - Set(events.map(\.seq)).intersection(1...Int64(last)).count
        let duplicated = events.count - Set(events.map(\.id)).count
        print(
            "chaos: vendd killed mid-burst: kills \(kills) (events awaiting the store at each: \(waitingAtKills)), events \(last), stored \(events.count), lost \(lost), duplicated \(duplicated); cash \(cash.coinsIn) in, \(cash.sales) sold, stock \(expectedSlots.map(\.stock).reduce(0, +)) as vendctl status"
        )
        #expect(waitingAtKills.allSatisfy { $0 >= 3 }, "a kill found the coins' events acknowledged already")
        #expect(events.map(\.seq) == Array(1...Int64(last)))
        #expect(lost == 0 && duplicated == 0)
        #expect(try fleet.gaps().isEmpty)
        let collections = try fleet.collections(of: "m1")
        #expect(collections.count == 1, "\(store.log)")
        #expect(collections.first?.columns.number == 1 && collections.first?.columns.total == collected.total)
        #expect(collections.first?.columns.total == status.books.coinsIn, "every coin went to the cash box")
        #expect(
            collections.first?.columns.denominations
                == collected.coins.map { DenominationCount(kind: .coin, value: $0.value, count: Int64($0.count)) })
        #expect(events.first { $0.seq == collections.first?.seq }?.type == "cash-collected")
        #expect(daemon.runs == kills + 1)
        #expect(try daemon.stop() == 0)
        #expect(store.stop())
    }
}
