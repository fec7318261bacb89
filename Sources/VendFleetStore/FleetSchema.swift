/// The store's one schema, as versioned migrations. Both engines get the same tables, columns
/// and keys; only the column types are spelt per engine. A migration is never edited once
/// released: a change is a new version. docs/fleet-store.md describes every column.
enum FleetSchema {
    enum Dialect {
        case sqlite
        case postgresql

        /// 64-bit integers: SQLite's INTEGER is already 64 bits.
        var bigint: String { self == .sqlite ? "INTEGER" : "BIGINT" }
    }

    struct Migration {
        let version: Int
        let statements: [String]
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
                ])
        ]
    }

    static let migrationsTable = "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)"
}
