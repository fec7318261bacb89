import CSQLite

/// One SQLite connection, used from one thread at a time.
final class SQLiteDatabase {
    private let handle: OpaquePointer

    init(path: String) throws {
        var opened: OpaquePointer?
        let status = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let opened else {
            let reason = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close_v2(opened)
            throw FleetStoreError("\(path): \(reason)")
        }
        handle = opened
        // `vendstore status` reads while the ingester writes: wait for a lock instead of failing.
        sqlite3_busy_timeout(handle, 10_000)
    }

    deinit { sqlite3_close_v2(handle) }

    /// The fleet's database at `path` (created if needed) in WAL with `synchronous=FULL`, its
    /// missing migrations applied; and the versions applied.
    static func openFleet(path: String, now: Int64) throws -> (SQLiteDatabase, migrationsApplied: [Int]) {
        let database = try SQLiteDatabase(path: path)
        try database.execute("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA synchronous = FULL")
        let applied = try SchemaMigrator(
            execute: database.execute,
            rows: { sql, values in try database.prepare(sql).rows(values) { $0.textColumns } },
            appliedVersions: { Set(try database.prepare("SELECT version FROM schema_migrations").rows([]) { Int($0.integer(0)) }) }
        ).migrate(FleetSchema.migrations(.sqlite), now: now)
        return (database, applied)
    }

    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard status == SQLITE_OK else { throw FleetStoreError("\(message.map { String(cString: $0) } ?? "error \(status)") in: \(sql)") }
    }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw FleetStoreError("\(lastError) in: \(sql)")
        }
        return SQLiteStatement(statement, database: self)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    var lastError: String { String(cString: sqlite3_errmsg(handle)) }
}

/// A prepared statement: bind, step through rows, reset for the next use.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private unowned let database: SQLiteDatabase

    init(_ handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds the values (1-based, in order) after a reset.
    func bind(_ values: [SQLValue]) throws {
        sqlite3_reset(handle)
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            let status =
                switch value {
                case .integer(let number): sqlite3_bind_int64(handle, position, number)
                case .text(let text): sqlite3_bind_text(handle, position, text, -1, csqlite_transient())
                case .null: sqlite3_bind_null(handle, position)
                }
            guard status == SQLITE_OK else { throw FleetStoreError("binding: \(database.lastError)") }
        }
    }

    /// The next row, or false when done.
    func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw FleetStoreError(database.lastError)
        }
    }

    /// Runs a statement that returns no rows.
    func run(_ values: [SQLValue]) throws {
        try bind(values)
        while try step() {}
    }

    /// Every row, each read by `row`.
    func rows<Row>(_ values: [SQLValue], _ row: (SQLiteStatement) -> Row) throws -> [Row] {
        try bind(values)
        var rows: [Row] = []
        while try step() { rows.append(row(self)) }
        return rows
    }

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func text(_ column: Int32) -> String { sqlite3_column_text(handle, column).map { String(cString: $0) } ?? "" }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func optionalInteger(_ column: Int32) -> Int64? { isNull(column) ? nil : integer(column) }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    /// The current row's columns as text (integers in decimal), nil for NULL.
    var textColumns: [String?] { (0..<sqlite3_column_count(handle)).map { optionalText($0) } }
}
