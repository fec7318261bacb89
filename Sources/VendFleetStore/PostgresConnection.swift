import CPostgreSQL

#if canImport(Glibc)
    import Glibc
#endif

/// One libpq connection with prepared statements, used from one thread at a time. Parameters
/// and results travel as text (arrays as PostgreSQL array literals, PostgresArray).
final class PostgresConnection {
    private let handle: OpaquePointer

    init(_ conninfo: String) throws {
        guard let connection = PQconnectdb(conninfo) else { throw FleetStoreError("libpq: out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let reason = String(cString: PQerrorMessage(connection)).trimmingTrailingNewlines
            PQfinish(connection)
            throw FleetStoreError("cannot connect to PostgreSQL: \(reason)")
        }
        handle = connection
        // CREATE TABLE IF NOT EXISTS and friends report NOTICEs; libpq would print them to stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    deinit { PQfinish(handle) }

    /// "postgresql <database> on <host>:<port>" (host is the socket directory for a local socket).
    var target: String {
        "postgresql \(String(cString: PQdb(handle))) on \(String(cString: PQhost(handle))):\(String(cString: PQport(handle)))"
    }

    /// False once the server has gone (restarted, killed): the connection must be made again.
    var isUsable: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Runs SQL without parameters; returns its rows, if any.
    @discardableResult
    func execute(_ sql: String) throws -> [[String?]] {
        try rows(of: PQexec(handle, sql), what: sql)
    }

    /// Applies the fleet schema's missing migrations; returns the versions applied.
    func migrateFleet(now: Int64) throws -> [Int] {
        try SchemaMigrator(
            execute: { try self.execute($0) },
            rows: { sql, values in try self.execute(sql, values) },
            appliedVersions: { Set(try self.execute("SELECT version FROM schema_migrations").compactMap { $0[0].flatMap { Int($0) } }) },
            // Any constant shared by every vendstore: 0x76656e64 is "vend".
            lockStatement: "SELECT pg_advisory_xact_lock(1986358884)"
        ).migrate(FleetSchema.migrations(.postgresql), now: now)
    }

    /// Runs SQL with `?` placeholders (as `FleetSQL`'s) bound to the values, unprepared.
    @discardableResult
    func execute(_ sql: String, _ values: [SQLValue]) throws -> [[String?]] {
        try execute(PostgresPlaceholders.numbered(sql), parameters: values.map(PostgresPlaceholders.text))
    }

    /// Runs SQL with text parameters `$1`, `$2`… (nil is NULL), unprepared; returns its rows.
    @discardableResult
    func execute(_ sql: String, parameters: [String?]) throws -> [[String?]] {
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { for copy in copies { free(copy) } }
        let values = copies.map { UnsafePointer($0) }
        return try rows(of: PQexecParams(handle, sql, Int32(values.count), nil, values, nil, nil, 0), what: sql)
    }

    func prepare(_ name: String, _ sql: String) throws {
        try rows(of: PQprepare(handle, name, sql, 0, nil), what: sql)
    }

    /// Runs the prepared statement `name` with text parameters (nil is NULL).
    @discardableResult
    func run(_ name: String, _ parameters: [String?]) throws -> [[String?]] {
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { for copy in copies { free(copy) } }
        let values = copies.map { UnsafePointer($0) }
        return try rows(of: PQexecPrepared(handle, name, Int32(values.count), values, nil, nil, 0), what: name)
    }

    @discardableResult
    private func rows(of result: OpaquePointer?, what: String) throws -> [[String?]] {
        guard let result else { throw FleetStoreError("\(what): \(String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines)") }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw FleetStoreError("\(what): \(String(cString: PQresultErrorMessage(result)).trimmingTrailingNewlines)")
        }
        let columns = PQnfields(result)
        return (0..<PQntuples(result)).map { row in
            (0..<columns).map { column in
                PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
            }
        }
    }
}

extension String {
    fileprivate var trimmingTrailingNewlines: String {
        var text = self
        while text.last?.isNewline == true { text.removeLast() }
        return text
    }
}
