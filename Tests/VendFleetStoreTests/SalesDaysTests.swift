import Foundation
import Testing
import VendFleetStore
import VenddTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A `vend-ended` event of machine `m1` as vendd sends it.
private func vendEnded(_ seq: Int64, at: Int64, amount: String, outcome: String = "sold", payment: String?, slot: String = "A1", id: String? = nil)
    -> IncomingEvent
{
    let id = id ?? "m1-\(seq)"
    let paid = payment.map { #","payment":"\#($0)""# } ?? ""
    return IncomingEvent(
        machine: "m1", seq: seq, id: id, type: "vend-ended", at: at,
        payload:
            #"{"id":"\#(id)","seq":\#(seq),"machine":"m1","at":\#(at),"type":"vend-ended","currency":"EUR","vend":\#(seq),"slot":"\#(slot)","product":"cola","amount":"\#(amount)","outcome":"\#(outcome)"\#(paid)}"#
    )
}

/// Local noon of the day `daysBack` before today, in milliseconds since the epoch.
private func localNoon(daysBack: Int32) -> Int64 {
    var seconds = time(nil)
    var parts = tm()
    localtime_r(&seconds, &parts)
    parts.tm_hour = 12
    parts.tm_min = 0
    parts.tm_sec = 0
    parts.tm_mday -= daysBack
    parts.tm_isdst = -1
    return Int64(mktime(&parts)) * 1000
}

/// The day tables' rows, in key order, as text.
private func salesRows(_ sql: FleetSQL) throws -> [[String?]] {
    try sql.rows("SELECT day, machine, currency, digits, cash_count, cash_units, card_count, card_units FROM sales_days ORDER BY day, machine", [])
        + sql.rows("SELECT day, machine, slot, sold FROM slot_sales_days ORDER BY day, machine, slot", [])
}

@Suite("Sales per day, kept by the commit", .timeLimit(.minutes(5)))
struct SalesDaysTests {
    private func openSQL(_ engine: Engine, _ subject: StoreUnderTest, conninfo: String?) throws -> FleetSQL {
        switch engine {
        case .sqlite: try openFleetSQL(sqlitePath: subject.directory.path + "/fleet.db", now: 1)
        case .postgresql: try openFleetSQL(conninfo: try #require(conninfo), now: 1)
        }
    }

    @Test(arguments: Engine.allCases)
    func soldVendsAreSummedPerLocalDayCashAndCardApartAndAResendAddsNothing(_ engine: Engine) throws {
        let (subject, conninfo) = try Self.subject(engine)
        defer { subject.directory.remove() }
        let store = try subject.open()
        let (today, yesterday) = (localNoon(daysBack: 0), localNoon(daysBack: 1))
        let batch = [
            vendEnded(1, at: today, amount: "1.50", payment: "cash"),
            vendEnded(2, at: today + 1, amount: "2.05", payment: "cashless1", slot: "B2"),
            vendEnded(3, at: today + 2, amount: "1.50", payment: "cash"),
            vendEnded(4, at: today + 3, amount: "1.50", outcome: "not-dropped", payment: nil),
            vendEnded(5, at: today + 4, amount: "1.50", payment: "free-cashless1"),
            vendEnded(6, at: yesterday, amount: "3", payment: "cashless2"),
        ]
        #expect(try store.commit(events: batch, retained: [], receivedAt: 10).inserted == 6)
        let sql = try openSQL(engine, subject, conninfo: conninfo)
        let (day, dayBefore) = (String(LocalDay.of(today)), String(LocalDay.of(yesterday)))
        let expected: [[String?]] = [
            [dayBefore, "m1", "EUR", "0", "0", "0", "1", "30000"],
            [day, "m1", "EUR", "2", "2", "30000", "1", "20500"],
            [dayBefore, "m1", "A1", "1"],
            [day, "m1", "A1", "2"],
            [day, "m1", "B2", "1"],
        ]
        #expect(try salesRows(sql) == expected)
        // The whole batch again (its ack was lost), then one resent event among new ones, and
        // another id under a held sequence: only the new sale counts.
        #expect(try store.commit(events: batch, retained: [], receivedAt: 11).duplicates == 6)
        let mixed = try store.commit(
            events: [vendEnded(1, at: today, amount: "1.50", payment: "cash"), vendEnded(7, at: today + 5, amount: "0.95", payment: "cash")],
            retained: [], receivedAt: 12)
        #expect(mixed.inserted == 1 && mixed.duplicates == 1)
        let conflict = try store.commit(
            events: [vendEnded(2, at: today, amount: "9.00", payment: "cash", id: "impostor")], retained: [], receivedAt: 13)
        #expect(conflict.conflicts.count == 1)
        let after = try salesRows(sql)
        #expect(after[1] == [day, "m1", "EUR", "2", "3", "39500", "1", "20500"])
        #expect(after[3] == [day, "m1", "A1", "3"])
    }

    @Test(arguments: Engine.allCases)
    func migrationFiveFillsTheTablesFromTheStoredEvents(_ engine: Engine) throws {
        let (subject, conninfo) = try Self.subject(engine)
        defer { subject.directory.remove() }
        let store = try subject.open()
        var events: [IncomingEvent] = []
        for seq in Int64(1)...40 {
            let at = localNoon(daysBack: Int32(seq % 9)) + seq * 61_000
            events.append(
                vendEnded(seq, at: at, amount: seq % 3 == 0 ? "1200" : "1.5", payment: seq % 2 == 0 ? "cash" : "cashless2", slot: "A\(seq % 4)"))
        }
        _ = try store.commit(events: events, retained: [], receivedAt: 10)
        let sql = try openSQL(engine, subject, conninfo: conninfo)
        let kept = try salesRows(sql)
        #expect(kept.count > 9)
        // As a store of schema 4 would hold them: the events, no day tables.
        try sql.rows("DROP TABLE sales_days", [])
        try sql.rows("DROP TABLE slot_sales_days", [])
        try sql.rows("DELETE FROM schema_migrations WHERE version = 5", [])
        let reopened = try subject.open()
        #expect(reopened.migrationsApplied == [5])
        #expect(try salesRows(try openSQL(engine, subject, conninfo: conninfo)) == kept)
    }

    /// The ingester's connection keeps no read snapshot between commits: another connection's
    /// write (a login's session, `vendstore user add`) once made every later BEGIN IMMEDIATE fail.
    @Test func sqliteCommitsGoOnAfterAnotherConnectionWrote() throws {
        let subject = try StoreUnderTest(.sqlite)
        defer { subject.directory.remove() }
        let store = try subject.open()
        let today = localNoon(daysBack: 0)
        // The second commit reads the machine's progress row the first one made.
        for seq in Int64(1)...2 {
            _ = try store.commit(events: [vendEnded(seq, at: today, amount: "1.00", payment: "cash")], retained: [], receivedAt: 10)
        }
        let other = try openFleetSQL(sqlitePath: subject.directory.path + "/fleet.db", now: 1)
        try other.rows("INSERT INTO office_audit (at, actor, action, detail) VALUES (1, 'test', 'write', 'another connection')", [])
        let next = try store.commit(events: [vendEnded(3, at: today, amount: "1.00", payment: "cash")], retained: [], receivedAt: 11)
        #expect(next.inserted == 1 && next.acknowledgements == ["m1": 3])
    }

    @Test func aLocalDayEndsAtLocalMidnight() {
        var parts = tm()
        parts.tm_year = 2026 - 1900
        parts.tm_mon = 2
        parts.tm_mday = 1
        parts.tm_isdst = -1
        let midnight = Int64(mktime(&parts)) * 1000
        #expect(LocalDay.of(midnight) == 20_260_301)
        #expect(LocalDay.of(midnight - 1) == 20_260_228)
    }

    /// A fresh store, and its PostgreSQL connection string (nil on SQLite).
    private static func subject(_ engine: Engine) throws -> (StoreUnderTest, String?) {
        guard engine == .postgresql else { return (try StoreUnderTest(engine), nil) }
        let conninfo = try PostgresCluster.running().createDatabase()
        return (try StoreUnderTest(conninfo: conninfo), conninfo)
    }
}

extension StoreUnderTest {
    /// A store on the PostgreSQL database `conninfo` names.
    fileprivate init(conninfo: String) throws {
        directory = try TemporaryDirectory()
        open = { try PostgresFleetStore(conninfo: conninfo, now: 1) }
    }
}
