/// The store's one schema, as versioned migrations. Both engines get the same tables, columns
/// and keys; only the column types are spelt per engine. A migration is never edited once
/// released: a change is a new version. docs/fleet-store.md describes every column.
public enum FleetSchema {
    typealias Dialect = SQLDialect

    struct Migration {
        let version: Int
        let statements: [String]
        /// Run after the statements, in the same transaction, with the engine's statement runner:
        /// fills new tables from what is stored.
        var backfill: ((_ run: (String, [SQLValue]) throws -> [[String?]]) throws -> Void)? = nil
    }

    static func migrations(_ dialect: Dialect) -> [Migration] {
        let bigint = dialect.bigint
        return [
            Migration(
                version: 1,
                statements: [
                    """
                    CREATE TABLE events (
                        machine TEXT NOT NULL,
                        seq \(bigint) NOT NULL,
                        id TEXT NOT NULL,
                        type TEXT NOT NULL,
                        at \(bigint) NOT NULL,
                        payload TEXT NOT NULL,
                        received_at \(bigint) NOT NULL,
                        PRIMARY KEY (machine, seq))
                    """,
                    """
                    CREATE TABLE machine_progress (
                        machine TEXT PRIMARY KEY,
                        contiguous \(bigint) NOT NULL DEFAULT 0,
                        highest \(bigint) NOT NULL DEFAULT 0,
                        updated_at \(bigint) NOT NULL DEFAULT 0)
                    """,
                    """
                    CREATE TABLE gaps (
                        machine TEXT NOT NULL,
                        first_seq \(bigint) NOT NULL,
                        last_seq \(bigint) NOT NULL,
                        seen_at \(bigint) NOT NULL,
                        PRIMARY KEY (machine, first_seq))
                    """,
                    """
                    CREATE TABLE machine_latest (
                        machine TEXT NOT NULL,
                        subject TEXT NOT NULL,
                        payload TEXT NOT NULL,
                        received_at \(bigint) NOT NULL,
                        PRIMARY KEY (machine, subject))
                    """,
                ]),
            Migration(
                version: 2,
                statements: [
                    """
                    CREATE TABLE machine_slots (
                        machine TEXT NOT NULL,
                        slot TEXT NOT NULL,
                        product TEXT NOT NULL,
                        price TEXT NOT NULL,
                        currency TEXT NOT NULL,
                        available \(bigint) NOT NULL,
                        stock \(bigint) NOT NULL,
                        capacity \(bigint) NOT NULL,
                        earliest_expiry \(bigint),
                        received_at \(bigint) NOT NULL,
                        PRIMARY KEY (machine, slot))
                    """,
                    """
                    CREATE TABLE machine_cash (
                        machine TEXT PRIMARY KEY,
                        currency TEXT NOT NULL,
                        coins_in TEXT NOT NULL,
                        sales TEXT NOT NULL,
                        refunds TEXT NOT NULL,
                        bills_in TEXT,
                        change_paid TEXT,
                        unknown_payouts TEXT,
                        exact_change_only INTEGER,
                        received_at \(bigint) NOT NULL)
                    """,
                    """
                    CREATE TABLE machine_zones (
                        machine TEXT NOT NULL,
                        zone TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        health TEXT NOT NULL,
                        temperature TEXT,
                        sensor_fault TEXT,
                        set_point TEXT,
                        relay_on INTEGER,
                        max_reached TEXT,
                        since \(bigint),
                        cause TEXT,
                        at \(bigint),
                        received_at \(bigint) NOT NULL,
                        PRIMARY KEY (machine, zone))
                    """,
                ]),
            Migration(
                version: 3,
                statements: [
                    """
                    CREATE TABLE collections (
                        machine TEXT NOT NULL,
                        seq \(bigint) NOT NULL,
                        collection \(bigint) NOT NULL,
                        at \(bigint) NOT NULL,
                        since \(bigint),
                        currency TEXT NOT NULL,
                        total TEXT NOT NULL,
                        collected_by TEXT,
                        received_at \(bigint) NOT NULL,
                        PRIMARY KEY (machine, seq))
                    """,
                    """
                    CREATE TABLE collection_denominations (
                        machine TEXT NOT NULL,
                        seq \(bigint) NOT NULL,
                        kind TEXT NOT NULL,
                        value TEXT NOT NULL,
                        count \(bigint) NOT NULL,
                        PRIMARY KEY (machine, seq, kind, value))
                    """,
                    """
                    CREATE TABLE collection_counts (
                        machine TEXT NOT NULL,
                        seq \(bigint) NOT NULL,
                        kind TEXT NOT NULL,
                        value TEXT NOT NULL,
                        count \(bigint) NOT NULL,
                        entered_by TEXT NOT NULL,
                        entered_at \(bigint) NOT NULL,
                        PRIMARY KEY (machine, seq, kind, value))
                    """,
                ]),
            // The back office (VendOffice, docs/office.md): its users and their sessions, routes
            // and par levels, what its users changed; and the index its sales figures read.
            Migration(
                version: 4,
                statements: [
                    """
                    CREATE TABLE office_users (
                        name TEXT PRIMARY KEY,
                        role TEXT NOT NULL,
                        password_hash TEXT NOT NULL,
                        created_at \(bigint) NOT NULL)
                    """,
                    """
                    CREATE TABLE office_sessions (
                        token_hash TEXT PRIMARY KEY,
                        user_name TEXT NOT NULL,
                        csrf TEXT NOT NULL,
                        created_at \(bigint) NOT NULL,
                        expires_at \(bigint) NOT NULL)
                    """,
                    "CREATE INDEX office_sessions_user ON office_sessions (user_name)",
                    """
                    CREATE TABLE office_routes (
                        name TEXT PRIMARY KEY,
                        created_by TEXT NOT NULL,
                        created_at \(bigint) NOT NULL)
                    """,
                    """
                    CREATE TABLE office_route_machines (
                        route TEXT NOT NULL,
                        position INTEGER NOT NULL,
                        machine TEXT NOT NULL,
                        PRIMARY KEY (route, machine))
                    """,
                    """
                    CREATE TABLE office_par_levels (
                        machine TEXT NOT NULL,
                        slot TEXT NOT NULL,
                        par \(bigint) NOT NULL,
                        set_by TEXT NOT NULL,
                        set_at \(bigint) NOT NULL,
                        PRIMARY KEY (machine, slot))
                    """,
                    """
                    CREATE TABLE office_audit (
                        at \(bigint) NOT NULL,
                        actor TEXT NOT NULL,
                        action TEXT NOT NULL,
                        detail TEXT NOT NULL)
                    """,
                    "CREATE INDEX office_audit_at ON office_audit (at)",
                    "CREATE INDEX events_type_at ON events (type, at)",
                ]),
            // Sales per machine and box-local day (cash and card apart), and units sold per slot
            // and day, kept by the commit that inserts the sold vend-ended events: the fleet
            // page and the visit ranking read these, not the events.
            Migration(
                version: 5,
                statements: [
                    """
                    CREATE TABLE sales_days (
                        day \(bigint) NOT NULL,
                        machine TEXT NOT NULL,
                        currency TEXT NOT NULL,
                        digits INTEGER NOT NULL,
                        cash_count \(bigint) NOT NULL,
                        cash_units \(bigint) NOT NULL,
                        card_count \(bigint) NOT NULL,
                        card_units \(bigint) NOT NULL,
                        PRIMARY KEY (day, machine))
                    """,
                    """
                    CREATE TABLE slot_sales_days (
                        day \(bigint) NOT NULL,
                        machine TEXT NOT NULL,
                        slot TEXT NOT NULL,
                        sold \(bigint) NOT NULL,
                        PRIMARY KEY (day, machine, slot))
                    """,
                ],
                backfill: { run in
                    try SalesTally.stored(dialect, rows: run).write(dialect) { sql, values in _ = try run(sql, values) }
                }),
            // The machine page's history: the zones' temperatures (one reading per zone and
            // minute of the store's clock, kept `ZoneReadings.keptMinutes`) and the DEX audits
            // the office asked for with the `dex` command, archived.
            Migration(
                version: 6,
                statements: [
                    """
                    CREATE TABLE zone_readings (
                        machine TEXT NOT NULL,
                        zone TEXT NOT NULL,
                        minute \(bigint) NOT NULL,
                        at \(bigint) NOT NULL,
                        temperature TEXT NOT NULL,
                        PRIMARY KEY (machine, zone, minute))
                    """,
                    """
                    CREATE TABLE dex_audits (
                        request TEXT PRIMARY KEY,
                        machine TEXT NOT NULL,
                        requested_by TEXT NOT NULL,
                        requested_at \(bigint) NOT NULL,
                        received_at \(bigint),
                        file TEXT,
                        refusal TEXT)
                    """,
                    "CREATE INDEX dex_audits_machine ON dex_audits (machine, requested_at)",
                ]),
            // The back office's remote prices: each `price` command sent, and what its machine
            // answered.
            Migration(
                version: 7,
                statements: [
                    """
                    CREATE TABLE office_price_changes (
                        change_id TEXT NOT NULL,
                        machine TEXT NOT NULL,
                        slot TEXT NOT NULL,
                        product TEXT NOT NULL,
                        price TEXT NOT NULL,
                        currency TEXT NOT NULL,
                        requested_by TEXT NOT NULL,
                        requested_at \(bigint) NOT NULL,
                        outcome TEXT NOT NULL,
                        answer TEXT NOT NULL,
                        answered_at \(bigint),
                        PRIMARY KEY (change_id, machine, slot))
                    """,
                    "CREATE INDEX office_price_changes_at ON office_price_changes (requested_at)",
                ]),
            // The fleet page's slot alerts (sold out, or items not for sale: expired) read only
            // the slots that may have one, not a fleet's every slot (30 times its machines).
            Migration(
                version: 8,
                statements: [
                    "CREATE INDEX machine_slots_alerts ON machine_slots (machine, slot) WHERE \(FleetSchema.slotMayAlert)"
                ]),
            // A remote price names the line it sets (vendd's `price` command with `list` and
            // `payment`); the changes before it set list 1 for every payment.
            Migration(
                version: 9,
                statements: [
                    "ALTER TABLE office_price_changes ADD COLUMN price_list INTEGER NOT NULL DEFAULT 1",
                    "ALTER TABLE office_price_changes ADD COLUMN payment TEXT NOT NULL DEFAULT 'any'",
                ]),
        ]
    }

    /// The partial index's condition, which a query must repeat as one of its AND terms for
    /// either engine to use the index.
    public static let slotMayAlert = "(stock = 0 OR available < stock)"

    static let migrationsTable = "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)"
}

/// The zones' temperature history (schema 6): one reading per zone and minute of the store's
/// clock, the minute's last, so a machine sending more often cannot grow it; each zone's
/// readings older than `keptMinutes` go when a newer one comes.
public enum ZoneReadings {
    public static let keptMinutes: Int64 = 7 * 24 * 60

    static func minute(_ receivedAt: Int64) -> Int64 { receivedAt / 60_000 }

    static let upsert = """
        INSERT INTO zone_readings (machine, zone, minute, at, temperature) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (machine, zone, minute) DO UPDATE SET at = excluded.at, temperature = excluded.temperature
        """
    static let prune = "DELETE FROM zone_readings WHERE machine = ? AND zone = ? AND minute <= ?"
}

/// The columns an upsert of schema 2's tables overwrites (all but the key), for both engines.
enum PositionColumns {
    static let cash = ["currency", "coins_in", "sales", "refunds", "bills_in", "change_paid", "unknown_payouts", "exact_change_only", "received_at"]
    static let zone = [
        "kind", "health", "temperature", "sensor_fault", "set_point", "relay_on", "max_reached", "since", "cause", "at", "received_at",
    ]

    /// `a = excluded.a, …`: what an upsert's DO UPDATE sets.
    static func overwrite(_ columns: [String]) -> String {
        columns.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
    }
}
