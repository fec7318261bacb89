/// The store on PostgreSQL, for a fleet: several ingesters may share it (each machine's
/// progress row is locked for the transaction). Each step of a commit is one prepared
/// statement over the whole batch (arrays unnested by the server), so a batch of 500 events
/// costs about ten round trips, not 500.
public final class PostgresFleetStore: FleetStore {
    private let conninfo: String
    private let maxAhead: Int64
    /// Nil after the server went away: the next call connects again (and prepares again).
    private var live: PostgresConnection?
    public let migrationsApplied: [Int]
    public let name: String

    /// Connects and applies the missing migrations.
    public init(conninfo: String, maxAhead: Int64 = 1_000_000, now: Int64) throws {
        self.conninfo = conninfo
        self.maxAhead = maxAhead
        let connection = try PostgresConnection(conninfo)
        name = connection.target
        migrationsApplied = try connection.migrateFleet(now: now)
        try Self.prepareStatements(connection)
        live = connection
    }

    private static let statements: [(String, String)] = [
        (
            "events_of",
            "SELECT machine, seq, id, type, at, payload, received_at FROM events WHERE machine = $1 AND seq >= $2 ORDER BY seq LIMIT $3"
        ),
        ("latest_of", "SELECT subject, payload FROM machine_latest WHERE machine = $1"),
        ("ensure_progress", "INSERT INTO machine_progress (machine) SELECT unnest($1::text[]) ORDER BY 1 ON CONFLICT DO NOTHING"),
        (
            "lock_progress",
            "SELECT machine, contiguous, highest FROM machine_progress WHERE machine = ANY($1::text[]) ORDER BY machine FOR UPDATE"
        ),
        (
            "insert_events",
            """
            INSERT INTO events (machine, seq, id, type, at, payload, received_at)
            SELECT m, s, i, t, a, p, $7 FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[]) AS u(m, s, i, t, a, p)
            ON CONFLICT (machine, seq) DO NOTHING RETURNING machine, seq
            """
        ),
        (
            "stored_ids",
            "SELECT e.machine, e.seq, e.id FROM events e JOIN unnest($1::text[], $2::bigint[]) AS u(m, s) ON e.machine = u.m AND e.seq = u.s"
        ),
        (
            "held_above",
            "SELECT e.machine, e.seq FROM events e JOIN unnest($1::text[], $2::bigint[]) AS u(m, c) ON e.machine = u.m AND e.seq > u.c ORDER BY 1, 2"
        ),
        (
            "save_progress",
            """
            UPDATE machine_progress AS p SET contiguous = u.c, highest = u.h, updated_at = $4
            FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS u(m, c, h) WHERE p.machine = u.m
            """
        ),
        ("delete_gaps", "DELETE FROM gaps WHERE machine = ANY($1::text[])"),
        (
            "insert_gaps",
            "INSERT INTO gaps (machine, first_seq, last_seq, seen_at) SELECT m, f, l, $4 FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS u(m, f, l)"
        ),
        (
            "save_latest",
            """
            INSERT INTO machine_latest (machine, subject, payload, received_at)
            SELECT m, s, p, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS u(m, s, p)
            ON CONFLICT (machine, subject) DO UPDATE SET payload = excluded.payload, received_at = excluded.received_at
            """
        ),
        ("delete_slots", "DELETE FROM machine_slots WHERE machine = ANY($1::text[])"),
        (
            "insert_slots",
            """
            INSERT INTO machine_slots (machine, slot, product, price, currency, available, stock, capacity, earliest_expiry, received_at)
            SELECT *, $10::bigint FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[])
            """
        ),
        (
            "save_cash",
            """
            INSERT INTO machine_cash (machine, currency, coins_in, sales, refunds, bills_in, change_paid, unknown_payouts, exact_change_only, received_at)
            SELECT *, $10::bigint FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::integer[])
            ON CONFLICT (machine) DO UPDATE SET \(PositionColumns.overwrite(PositionColumns.cash))
            """
        ),
        (
            "save_zones",
            """
            INSERT INTO machine_zones (machine, zone, kind, health, temperature, sensor_fault, set_point, relay_on, max_reached, since, cause, at, received_at)
            SELECT *, $13::bigint FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::integer[], $9::text[], $10::bigint[], $11::text[], $12::bigint[])
            ON CONFLICT (machine, zone) DO UPDATE SET \(PositionColumns.overwrite(PositionColumns.zone))
            """
        ),
        (
            "save_zone_readings",
            """
            INSERT INTO zone_readings (machine, zone, minute, at, temperature)
            SELECT m, z, $5::bigint, a, t FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) AS u(m, z, a, t)
            ON CONFLICT (machine, zone, minute) DO UPDATE SET at = excluded.at, temperature = excluded.temperature
            """
        ),
        (
            "prune_zone_readings",
            """
            DELETE FROM zone_readings r USING unnest($1::text[], $2::text[]) AS u(m, z)
            WHERE r.machine = u.m AND r.zone = u.z AND r.minute <= $3::bigint
            """
        ),
        (
            "insert_collections",
            """
            INSERT INTO collections (machine, seq, collection, at, since, currency, total, collected_by, received_at)
            SELECT *, $9::bigint FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::text[], $8::text[])
            ON CONFLICT (machine, seq) DO NOTHING
            """
        ),
        (
            "insert_collection_denominations",
            """
            INSERT INTO collection_denominations (machine, seq, kind, value, count)
            SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[]) ON CONFLICT DO NOTHING
            """
        ),
        (
            "slots_of",
            "SELECT slot, product, price, available, stock, capacity, earliest_expiry FROM machine_slots WHERE machine = $1 ORDER BY slot"
        ),
        (
            "cash_of",
            "SELECT currency, coins_in, sales, refunds, bills_in, change_paid, unknown_payouts, exact_change_only FROM machine_cash WHERE machine = $1"
        ),
        (
            "zones_of",
            "SELECT zone, kind, health, temperature, sensor_fault, set_point, relay_on, max_reached, since, cause, at FROM machine_zones WHERE machine = $1 ORDER BY zone"
        ),
    ]

    private static func prepareStatements(_ connection: PostgresConnection) throws {
        for (name, sql) in statements { try connection.prepare(name, sql) }
    }

    /// The live connection, made again after the server went away.
    private func connection() throws -> PostgresConnection {
        if let live, live.isUsable { return live }
        live = nil
        let connection = try PostgresConnection(conninfo)
        try Self.prepareStatements(connection)
        live = connection
        return connection
    }

    public func commit(events: [IncomingEvent], retained: [RetainedUpdate], receivedAt: Int64) throws -> CommitOutcome {
        let steps = PostgresCommitSteps(connection: try connection())
        return try CommitProcedure.run(steps, events: events, retained: retained, receivedAt: receivedAt, maxAhead: maxAhead)
    }

    public func progress() throws -> [MachineProgress] {
        try connection().execute("SELECT machine, contiguous, highest, updated_at FROM machine_progress ORDER BY machine").map {
            MachineProgress(
                machine: $0[0] ?? "", contiguous: Int64($0[1] ?? "") ?? 0, highest: Int64($0[2] ?? "") ?? 0, updatedAt: Int64($0[3] ?? "") ?? 0)
        }
    }

    public func gaps() throws -> [SequenceGap] {
        try connection().execute("SELECT machine, first_seq, last_seq, seen_at FROM gaps ORDER BY machine, first_seq").map {
            SequenceGap(machine: $0[0] ?? "", first: Int64($0[1] ?? "") ?? 0, last: Int64($0[2] ?? "") ?? 0, seenAt: Int64($0[3] ?? "") ?? 0)
        }
    }

    public func events(of machine: String, from seq: Int64, limit: Int) throws -> [StoredEvent] {
        try connection().run(
            "events_of", [machine, String(seq), String(limit)]
        ).map {
            StoredEvent(
                machine: $0[0] ?? "", seq: Int64($0[1] ?? "") ?? 0, id: $0[2] ?? "", type: $0[3] ?? "", at: Int64($0[4] ?? "") ?? 0,
                payload: $0[5] ?? "", receivedAt: Int64($0[6] ?? "") ?? 0)
        }
    }

    public func latest(of machine: String) throws -> [String: String] {
        Dictionary(try connection().run("latest_of", [machine]).map { ($0[0] ?? "", $0[1] ?? "") }) { $1 }
    }

    public func slots(of machine: String) throws -> [SlotPosition] {
        try connection().run("slots_of", [machine]).map {
            SlotPosition(
                slot: $0[0] ?? "", product: $0[1] ?? "", price: $0[2] ?? "", available: Int64($0[3] ?? "") ?? 0, stock: Int64($0[4] ?? "") ?? 0,
                capacity: Int64($0[5] ?? "") ?? 0, earliestExpiry: $0[6].flatMap { Int64($0) })
        }
    }

    public func cash(of machine: String) throws -> CashPosition? {
        try connection().run("cash_of", [machine]).map {
            CashPosition(
                currency: $0[0] ?? "", coinsIn: $0[1] ?? "", sales: $0[2] ?? "", refunds: $0[3] ?? "", billsIn: $0[4], changePaid: $0[5],
                unknownPayouts: $0[6], exactChangeOnly: $0[7].map { $0 != "0" })
        }.first
    }

    public func collections(of machine: String) throws -> [CollectionRecord] {
        try CollectionBook(PostgresFleetSQL(conninfo: conninfo, connection: try connection())).collections(of: machine)
    }

    public func recordCount(machine: String, seq: Int64, counted: CountedCollection) throws {
        let sql = PostgresFleetSQL(conninfo: conninfo, connection: try connection())
        try sql.transaction { try CollectionBook(sql).recordCount(machine: machine, seq: seq, counted: counted) }
    }

    public func zones(of machine: String) throws -> [ZonePosition] {
        try connection().run("zones_of", [machine]).map {
            ZonePosition(
                zone: $0[0] ?? "", kind: $0[1] ?? "", health: $0[2] ?? "", temperature: $0[3], sensorFault: $0[4], setPoint: $0[5],
                relayOn: $0[6].map { $0 != "0" }, maxReached: $0[7], since: $0[8].flatMap { Int64($0) }, cause: $0[9],
                at: $0[10].flatMap { Int64($0) })
        }
    }
}

/// One commit's statements on one connection.
private struct PostgresCommitSteps: CommitSteps {
    let connection: PostgresConnection

    func begin() throws { try connection.execute("BEGIN") }

    func commitTransaction() throws { try connection.execute("COMMIT") }

    func rollback() { _ = try? connection.execute("ROLLBACK") }

    func lockStates(_ machines: [String]) throws -> [String: SequenceState] {
        let names = PostgresArray.text(machines)
        try connection.run("ensure_progress", [names])
        var states: [String: SequenceState] = [:]
        for row in try connection.run("lock_progress", [names]) {
            let state = SequenceState(contiguous: Int64(row[1] ?? "") ?? 0, highest: Int64(row[2] ?? "") ?? 0)
            // A row just made by ensure_progress is a machine never seen: absent, as on SQLite.
            if let machine = row[0], state != SequenceState() { states[machine] = state }
        }
        return states
    }

    func insert(_ events: [IncomingEvent], receivedAt: Int64) throws -> Set<EventKey> {
        guard !events.isEmpty else { return [] }
        let rows = try connection.run(
            "insert_events",
            [
                PostgresArray.text(events.map(\.machine)), PostgresArray.integers(events.map(\.seq)), PostgresArray.text(events.map(\.id)),
                PostgresArray.text(events.map(\.type)), PostgresArray.integers(events.map(\.at)), PostgresArray.text(events.map(\.payload)),
                String(receivedAt),
            ])
        return Set(rows.compactMap { row in row[0].flatMap { machine in Int64(row[1] ?? "").map { EventKey(machine: machine, seq: $0) } } })
    }

    func storedIDs(_ keys: [EventKey]) throws -> [EventKey: String] {
        let rows = try connection.run("stored_ids", [PostgresArray.text(keys.map(\.machine)), PostgresArray.integers(keys.map(\.seq))])
        var ids: [EventKey: String] = [:]
        for row in rows {
            if let machine = row[0], let seq = Int64(row[1] ?? ""), let id = row[2] { ids[EventKey(machine: machine, seq: seq)] = id }
        }
        return ids
    }

    func sequences(above marks: [String: Int64]) throws -> [String: [Int64]] {
        let machines = Array(marks.keys)
        let rows = try connection.run(
            "held_above", [PostgresArray.text(machines), PostgresArray.integers(machines.map { marks[$0] ?? 0 })])
        var held: [String: [Int64]] = [:]
        for row in rows {
            if let machine = row[0], let seq = Int64(row[1] ?? "") { held[machine, default: []].append(seq) }
        }
        return held
    }

    func saveStates(_ states: [String: SequenceState], at: Int64) throws {
        guard !states.isEmpty else { return }
        let machines = Array(states.keys)
        try connection.run(
            "save_progress",
            [
                PostgresArray.text(machines), PostgresArray.integers(machines.map { states[$0]?.contiguous ?? 0 }),
                PostgresArray.integers(machines.map { states[$0]?.highest ?? 0 }), String(at),
            ])
    }

    func replaceGaps(_ gaps: [String: [ClosedRange<Int64>]], seenAt: Int64) throws {
        try connection.run("delete_gaps", [PostgresArray.text(Array(gaps.keys))])
        let rows = gaps.flatMap { machine, ranges in ranges.map { (machine, $0) } }
        guard !rows.isEmpty else { return }
        try connection.run(
            "insert_gaps",
            [
                PostgresArray.text(rows.map(\.0)), PostgresArray.integers(rows.map(\.1.lowerBound)),
                PostgresArray.integers(rows.map(\.1.upperBound)), String(seenAt),
            ])
    }

    func saveLatest(_ updates: [RetainedUpdate], receivedAt: Int64) throws {
        guard !updates.isEmpty else { return }
        try connection.run(
            "save_latest",
            [
                PostgresArray.text(updates.map(\.machine)), PostgresArray.text(updates.map(\.subject)),
                PostgresArray.text(updates.map(\.payload)), String(receivedAt),
            ])
    }

    func savePositions(_ updates: [RetainedUpdate], receivedAt: Int64) throws {
        var stocks: [(machine: String, currency: String, slot: SlotPosition)] = []
        var restocked: [String] = []
        var cash: [(machine: String, cash: CashPosition)] = []
        var zones: [(machine: String, zone: ZonePosition)] = []
        for update in updates {
            switch update.columns {
            case .stock(let currency, let slots):
                restocked.append(update.machine)
                stocks += slots.map { (update.machine, currency, $0) }
            case .cash(let position): cash.append((update.machine, position))
            case .zone(let position): zones.append((update.machine, position))
            case nil: break
            }
        }
        let at = String(receivedAt)
        if !restocked.isEmpty {
            try connection.run("delete_slots", [PostgresArray.text(restocked)])
        }
        if !stocks.isEmpty {
            try connection.run(
                "insert_slots",
                [
                    PostgresArray.text(stocks.map(\.machine)), PostgresArray.text(stocks.map(\.slot.slot)),
                    PostgresArray.text(stocks.map(\.slot.product)),
                    PostgresArray.text(stocks.map(\.slot.price)), PostgresArray.text(stocks.map(\.currency)),
                    PostgresArray.integers(stocks.map(\.slot.available)), PostgresArray.integers(stocks.map(\.slot.stock)),
                    PostgresArray.integers(stocks.map(\.slot.capacity)), PostgresArray.integers(stocks.map(\.slot.earliestExpiry)), at,
                ])
        }
        if !cash.isEmpty {
            try connection.run(
                "save_cash",
                [
                    PostgresArray.text(cash.map(\.machine)), PostgresArray.text(cash.map(\.cash.currency)),
                    PostgresArray.text(cash.map(\.cash.coinsIn)),
                    PostgresArray.text(cash.map(\.cash.sales)), PostgresArray.text(cash.map(\.cash.refunds)),
                    PostgresArray.text(cash.map(\.cash.billsIn)),
                    PostgresArray.text(cash.map(\.cash.changePaid)), PostgresArray.text(cash.map(\.cash.unknownPayouts)),
                    PostgresArray.integers(cash.map { $0.cash.exactChangeOnly?.storedInteger }), at,
                ])
        }
        if !zones.isEmpty {
            try connection.run(
                "save_zones",
                [
                    PostgresArray.text(zones.map(\.machine)), PostgresArray.text(zones.map(\.zone.zone)), PostgresArray.text(zones.map(\.zone.kind)),
                    PostgresArray.text(zones.map(\.zone.health)), PostgresArray.text(zones.map(\.zone.temperature)),
                    PostgresArray.text(zones.map(\.zone.sensorFault)), PostgresArray.text(zones.map(\.zone.setPoint)),
                    PostgresArray.integers(zones.map { $0.zone.relayOn?.storedInteger }), PostgresArray.text(zones.map(\.zone.maxReached)),
                    PostgresArray.integers(zones.map(\.zone.since)), PostgresArray.text(zones.map(\.zone.cause)),
                    PostgresArray.integers(zones.map(\.zone.at)), at,
                ])
            let readings = zones.compactMap { entry in entry.zone.temperature.map { (entry.machine, entry.zone, $0) } }
            guard !readings.isEmpty else { return }
            let minute = ZoneReadings.minute(receivedAt)
            try connection.run(
                "save_zone_readings",
                [
                    PostgresArray.text(readings.map(\.0)), PostgresArray.text(readings.map(\.1.zone)),
                    PostgresArray.integers(readings.map { $0.1.at ?? receivedAt }), PostgresArray.text(readings.map(\.2)), String(minute),
                ])
            try connection.run(
                "prune_zone_readings",
                [PostgresArray.text(readings.map(\.0)), PostgresArray.text(readings.map(\.1.zone)), String(minute - ZoneReadings.keptMinutes)])
        }
    }

    func saveSales(_ tally: SalesTally) throws {
        try tally.write(.postgresql) { sql, values in try connection.execute(sql, values) }
    }

    func saveCollections(_ events: [IncomingEvent], receivedAt: Int64) throws {
        let heads = events.compactMap { event in event.collection.map { (event, $0) } }
        try connection.run(
            "insert_collections",
            [
                PostgresArray.text(heads.map(\.0.machine)), PostgresArray.integers(heads.map(\.0.seq)), PostgresArray.integers(heads.map(\.1.number)),
                PostgresArray.integers(heads.map(\.0.at)), PostgresArray.integers(heads.map(\.1.since)), PostgresArray.text(heads.map(\.1.currency)),
                PostgresArray.text(heads.map(\.1.total)), PostgresArray.text(heads.map(\.1.collectedBy)), String(receivedAt),
            ])
        let rows = heads.flatMap { event, collection in collection.denominations.map { (event, $0) } }
        guard !rows.isEmpty else { return }
        try connection.run(
            "insert_collection_denominations",
            [
                PostgresArray.text(rows.map(\.0.machine)), PostgresArray.integers(rows.map(\.0.seq)), PostgresArray.text(rows.map(\.1.kind.rawValue)),
                PostgresArray.text(rows.map(\.1.value)), PostgresArray.integers(rows.map(\.1.count)),
            ])
    }
}
