/// The fleet's database for what is not ingest (the back office, vendstore's `user` commands):
/// statements with bound parameters, never values spliced into SQL text.
public protocol FleetSQL: AnyObject {
    var dialect: SQLDialect { get }
    /// Runs `sql`, its `?` placeholders bound to `parameters` in order (the SQL text itself must
    /// hold no other `?`); returns its rows as text (integers in decimal), nil for NULL.
    @discardableResult
    func rows(_ sql: String, _ parameters: [SQLValue]) throws -> [[String?]]
    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<Result>(_ body: () throws -> Result) throws -> Result
}

/// The two engines' spellings where one schema needs them.
public enum SQLDialect: Sendable {
    case sqlite
    case postgresql

    /// 64-bit integers: SQLite's INTEGER is already 64 bits.
    var bigint: String { self == .sqlite ? "INTEGER" : "BIGINT" }

    /// The text of a top-level field of a JSON object held in a text column (NULL when absent).
    public func jsonText(_ column: String, _ field: String) -> String {
        switch self {
        case .sqlite: "CAST(json_extract(\(column), '$.\(field)') AS TEXT)"
        case .postgresql: "(\(column)::jsonb ->> '\(field)')"
        }
    }
}

/// A value bound to a placeholder.
public enum SQLValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case null

    public static func integer(_ value: Int64?) -> SQLValue { value.map { .integer($0) } ?? .null }
    public static func text(_ value: String?) -> SQLValue { value.map { .text($0) } ?? .null }
}

/// Opens the fleet's database (creating an SQLite file if needed) and applies the missing
/// migrations, as the store does at start.
public func openFleetSQL(sqlitePath: String, now: Int64) throws -> FleetSQL {
    SQLiteFleetSQL(try SQLiteDatabase.openFleet(path: sqlitePath, now: now).0)
}

/// Connects to PostgreSQL and applies the missing migrations, as the store does at start.
public func openFleetSQL(conninfo: String, now: Int64) throws -> FleetSQL {
    let connection = try PostgresConnection(conninfo)
    _ = try connection.migrateFleet(now: now)
    return PostgresFleetSQL(conninfo: conninfo, connection: connection)
}

/// One SQLite connection; statements prepared once per SQL text.
final class SQLiteFleetSQL: FleetSQL {
    private let database: SQLiteDatabase
    private var prepared: [String: SQLiteStatement] = [:]

    init(_ database: SQLiteDatabase) { self.database = database }

    var dialect: SQLDialect { .sqlite }

    func rows(_ sql: String, _ parameters: [SQLValue]) throws -> [[String?]] {
        let statement = try prepared[sql] ?? database.prepare(sql)
        prepared[sql] = statement
        return try statement.rows(parameters) { $0.textColumns }
    }

    func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try database.execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try database.execute("COMMIT")
            return result
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
    }
}

/// One libpq connection, made again after the server went away.
final class PostgresFleetSQL: FleetSQL {
    private let conninfo: String
    private var live: PostgresConnection?

    init(conninfo: String, connection: PostgresConnection) {
        self.conninfo = conninfo
        live = connection
    }

    var dialect: SQLDialect { .postgresql }

    private func connection() throws -> PostgresConnection {
        if let live, live.isUsable { return live }
        live = nil
        let connection = try PostgresConnection(conninfo)
        live = connection
        return connection
    }

    func rows(_ sql: String, _ parameters: [SQLValue]) throws -> [[String?]] {
        try connection().execute(sql, parameters)
    }

    func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        let connection = try connection()
        try connection.execute("BEGIN")
        do {
            let result = try body()
            try connection.execute("COMMIT")
            return result
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }
}

/// `FleetSQL`'s statements in libpq's terms.
enum PostgresPlaceholders {
    /// `?` placeholders as PostgreSQL's `$1`, `$2`…
    static func numbered(_ sql: String) -> String {
        var number = 0
        var text = ""
        for character in sql {
            if character == "?" {
                number += 1
                text += "$\(number)"
            } else {
                text.append(character)
            }
        }
        return text
    }

    /// A value as libpq's text parameter (nil: NULL).
    static func text(_ value: SQLValue) -> String? {
        switch value {
        case .integer(let number): String(number)
        case .text(let text): text
        case .null: nil
        }
    }
}
