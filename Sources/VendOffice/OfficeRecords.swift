import VendFleetStore

/// What a user may do: the operator everything; the route driver the fleet, machine pages,
/// routes' pick lists and cash entries, but no prices and no changes to routes or par levels.
public enum OfficeRole: String, Sendable, CaseIterable {
    case operator_ = "operator"
    case driver

    /// "operator" or "driver", as typed on the command line.
    public static func named(_ text: String) -> OfficeRole? { allCases.first { $0.rawValue == text } }
}

public struct OfficeUser: Sendable, Equatable {
    public let name: String
    public let role: OfficeRole
}

/// A logged-in user's session, as looked up by its cookie.
struct OfficeSession: Sendable {
    let user: OfficeUser
    let csrf: String
    let expiresAt: Int64
}

/// A route: machines in visit order.
struct OfficeRoute: Sendable {
    let name: String
    let machines: [String]
}

/// The back office's own tables (schema version 4): users, sessions, routes, par levels and the
/// audit log, on the fleet's database. Every statement has bound parameters.
public final class OfficeRecords {
    let sql: FleetSQL

    public init(_ sql: FleetSQL) { self.sql = sql }

    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// Names of users and routes: letters, digits, '-', '_', '.', '@' and spaces inside, 1 to 64.
    static func isName(_ text: String) -> Bool {
        (1...64).contains(text.count) && text.first != " " && text.last != " "
            && text.allSatisfy { $0.isLetter || $0.isNumber || "-_.@ ".contains($0) }
    }

    // MARK: Users

    /// Adds a user with an Argon2id hash of `password` (at least 10 characters).
    public func addUser(_ name: String, role: OfficeRole, password: String, now: Int64) throws {
        guard Self.isName(name) else {
            throw Refusal(description: "'\(name)' is not a user name: 1 to 64 letters, digits, '-', '_', '.', '@' (spaces only inside)")
        }
        guard password.count >= 10 else { throw Refusal(description: "the password is too short: at least 10 characters") }
        guard try user(named: name) == nil else {
            throw Refusal(description: "a user '\(name)' exists already: remove it first (vendstore user remove \(name))")
        }
        let hash = try Sodium.hashPassword(password)
        try sql.transaction {
            try sql.rows(
                "INSERT INTO office_users (name, role, password_hash, created_at) VALUES (?, ?, ?, ?)",
                [.text(name), .text(role.rawValue), .text(hash), .integer(now)])
            try audit(actor: "vendstore user add", action: "user-added", detail: "\(name) (\(role.rawValue))", now: now)
        }
    }

    /// Removes a user and ends their sessions; false when there was none.
    @discardableResult
    public func removeUser(_ name: String, now: Int64) throws -> Bool {
        try sql.transaction {
            guard try user(named: name) != nil else { return false }
            try sql.rows("DELETE FROM office_sessions WHERE user_name = ?", [.text(name)])
            try sql.rows("DELETE FROM office_users WHERE name = ?", [.text(name)])
            try audit(actor: "vendstore user remove", action: "user-removed", detail: name, now: now)
            return true
        }
    }

    public func users() throws -> [OfficeUser] {
        try sql.rows("SELECT name, role FROM office_users ORDER BY name", []).compactMap { row in
            guard let name = row[0], let role = row[1].flatMap(OfficeRole.named) else { return nil }
            return OfficeUser(name: name, role: role)
        }
    }

    func user(named name: String) throws -> OfficeUser? {
        try sql.rows("SELECT name, role FROM office_users WHERE name = ?", [.text(name)]).first.flatMap { row in
            guard let name = row[0], let role = row[1].flatMap(OfficeRole.named) else { return nil }
            return OfficeUser(name: name, role: role)
        }
    }

    /// The user if `password` is theirs. An unknown name costs the same Argon2id verification as a
    /// known one, so timing does not tell which names exist.
    func authenticate(_ name: String, password: String, decoyHash: String) throws -> OfficeUser? {
        let row = try sql.rows("SELECT name, role, password_hash FROM office_users WHERE name = ?", [.text(name)]).first
        let matches = Sodium.verifyPassword(password, hash: row?[2] ?? decoyHash)
        guard matches, let row, let name = row[0], let role = row[1].flatMap(OfficeRole.named) else { return nil }
        return OfficeUser(name: name, role: role)
    }

    // MARK: Sessions

    /// A new session for `user`: its cookie token (stored only as a digest) and CSRF token.
    func openSession(for user: OfficeUser, now: Int64, lifetime: Int64) throws -> (token: String, csrf: String) {
        let token = Sodium.randomToken()
        let csrf = Sodium.randomToken()
        try sql.transaction {
            try sql.rows("DELETE FROM office_sessions WHERE expires_at <= ?", [.integer(now)])
            try sql.rows(
                "INSERT INTO office_sessions (token_hash, user_name, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                [.text(Sodium.tokenDigest(token)), .text(user.name), .text(csrf), .integer(now), .integer(now + lifetime)])
        }
        return (token, csrf)
    }

    /// The session of a cookie token, if it exists, has not expired and its user still does.
    func session(token: String, now: Int64) throws -> OfficeSession? {
        let rows = try sql.rows(
            """
            SELECT u.name, u.role, s.csrf, s.expires_at FROM office_sessions s JOIN office_users u ON u.name = s.user_name
            WHERE s.token_hash = ? AND s.expires_at > ?
            """, [.text(Sodium.tokenDigest(token)), .integer(now)])
        guard let row = rows.first, let name = row[0], let role = row[1].flatMap(OfficeRole.named), let csrf = row[2],
            let expires = row[3].flatMap({ Int64($0) })
        else { return nil }
        return OfficeSession(user: OfficeUser(name: name, role: role), csrf: csrf, expiresAt: expires)
    }

    func closeSession(token: String) throws {
        try sql.rows("DELETE FROM office_sessions WHERE token_hash = ?", [.text(Sodium.tokenDigest(token))])
    }

    // MARK: Routes and par levels

    func routes() throws -> [OfficeRoute] {
        let rows = try sql.rows(
            """
            SELECT r.name, m.machine FROM office_routes r LEFT JOIN office_route_machines m ON m.route = r.name
            ORDER BY r.name, m.position
            """, [])
        var routes: [OfficeRoute] = []
        for row in rows {
            guard let name = row[0] else { continue }
            if routes.last?.name != name { routes.append(OfficeRoute(name: name, machines: [])) }
            if let machine = row[1] { routes[routes.count - 1] = OfficeRoute(name: name, machines: routes[routes.count - 1].machines + [machine]) }
        }
        return routes
    }

    func route(named name: String) throws -> OfficeRoute? {
        try routes().first { $0.name == name }
    }

    /// Creates or replaces the route `name` with `machines` in that visit order.
    func saveRoute(_ name: String, machines: [String], by actor: String, now: Int64) throws {
        guard Self.isName(name) else {
            throw Refusal(description: "'\(name)' is not a route name: 1 to 64 letters, digits, '-', '_', '.', '@' (spaces only inside)")
        }
        var seen: Set<String> = []
        for machine in machines where !seen.insert(machine).inserted {
            throw Refusal(description: "machine '\(machine)' is listed twice: list each machine once, in visit order")
        }
        guard !machines.isEmpty else { throw Refusal(description: "a route needs at least one machine") }
        try sql.transaction {
            try sql.rows("DELETE FROM office_route_machines WHERE route = ?", [.text(name)])
            try sql.rows("DELETE FROM office_routes WHERE name = ?", [.text(name)])
            try sql.rows("INSERT INTO office_routes (name, created_by, created_at) VALUES (?, ?, ?)", [.text(name), .text(actor), .integer(now)])
            for (position, machine) in machines.enumerated() {
                try sql.rows(
                    "INSERT INTO office_route_machines (route, position, machine) VALUES (?, ?, ?)",
                    [.text(name), .integer(Int64(position)), .text(machine)])
            }
            try audit(actor: actor, action: "route-saved", detail: "\(name): \(machines.joined(separator: ", "))", now: now)
        }
    }

    func deleteRoute(_ name: String, by actor: String, now: Int64) throws {
        try sql.transaction {
            try sql.rows("DELETE FROM office_route_machines WHERE route = ?", [.text(name)])
            try sql.rows("DELETE FROM office_routes WHERE name = ?", [.text(name)])
            try audit(actor: actor, action: "route-deleted", detail: name, now: now)
        }
    }

    /// Sets (or with nil clears) the par level of a machine's slot.
    func setPar(machine: String, slot: String, par: Int64?, by actor: String, now: Int64) throws {
        try sql.transaction {
            try sql.rows("DELETE FROM office_par_levels WHERE machine = ? AND slot = ?", [.text(machine), .text(slot)])
            if let par {
                try sql.rows(
                    "INSERT INTO office_par_levels (machine, slot, par, set_by, set_at) VALUES (?, ?, ?, ?, ?)",
                    [.text(machine), .text(slot), .integer(par), .text(actor), .integer(now)])
            }
            try audit(actor: actor, action: "par-set", detail: "\(machine) \(slot): \(par.map { "\($0)" } ?? "capacity")", now: now)
        }
    }

    // MARK: Audit

    func audit(actor: String, action: String, detail: String, now: Int64) throws {
        try sql.rows(
            "INSERT INTO office_audit (at, actor, action, detail) VALUES (?, ?, ?, ?)", [.integer(now), .text(actor), .text(action), .text(detail)])
    }

    struct AuditEntry {
        let at: Int64
        let actor: String
        let action: String
        let detail: String
    }

    func auditLog(limit: Int) throws -> [AuditEntry] {
        try sql.rows("SELECT at, actor, action, detail FROM office_audit ORDER BY at DESC LIMIT ?", [.integer(Int64(limit))]).map {
            AuditEntry(at: $0[0].flatMap { Int64($0) } ?? 0, actor: $0[1] ?? "", action: $0[2] ?? "", detail: $0[3] ?? "")
        }
    }
}
