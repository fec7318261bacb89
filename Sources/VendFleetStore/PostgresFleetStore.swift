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

    /// Connects and applies the missing migrations.
    public init(conninfo: String, maxAhead: Int64 = 1_000_000, now: Int64) throws {
        self.conninfo = conninfo
        self.maxAhead = maxAhead
        let connection = try PostgresConnection(conninfo)
        migrationsApplied = try SchemaMigrator(
            execute: { try connection.execute($0) },
            appliedVersions: { Set(try connection.execute("SELECT version FROM schema_migrations").compactMap { $0[0].flatMap { Int($0) } }) },
            // Any constant shared by every vendstore: 0x76656e64 is "vend".
            lockStatement: "SELECT pg_advisory_xact_lock(1986358884)"
        ).migrate(FleetSchema.migrations(.postgresql), now: now)
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
}
