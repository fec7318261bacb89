/// Brings a database to the newest schema at start: each missing migration in its own
/// transaction, recorded in `schema_migrations`. Running it again does nothing.
struct SchemaMigrator {
    /// Runs one statement (no rows).
    let execute: (String) throws -> Void
    /// Runs one statement with `?` placeholders bound to the values; returns its rows as text.
    let rows: (String, [SQLValue]) throws -> [[String?]]
    /// The versions recorded in `schema_migrations`.
    let appliedVersions: () throws -> Set<Int>
    /// Taken first in each migration's transaction (PostgreSQL: an advisory lock, so that
    /// ingesters starting together migrate once).
    var lockStatement: String? = nil

    /// Returns the versions it applied.
    @discardableResult
    func migrate(_ migrations: [FleetSchema.Migration], now: Int64) throws -> [Int] {
        try execute(FleetSchema.migrationsTable)
        var applied: [Int] = []
        for migration in migrations {
            try execute("BEGIN")
            do {
                if let lockStatement { try execute(lockStatement) }
                if try !appliedVersions().contains(migration.version) {
                    for statement in migration.statements { try execute(statement) }
                    try migration.backfill?(rows)
                    try execute("INSERT INTO schema_migrations (version, applied_at) VALUES (\(migration.version), \(now))")
                    applied.append(migration.version)
                }
                try execute("COMMIT")
            } catch {
                try? execute("ROLLBACK")
                throw FleetStoreError("schema migration \(migration.version): \(error)")
            }
        }
        return applied
    }
}
