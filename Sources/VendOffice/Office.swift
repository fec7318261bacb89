import Logging
import Synchronization
import VendConfig
import VendFleetIngest
import VendFleetStore

#if canImport(Glibc)
    import Glibc
#endif

/// The back office: each request answered from the fleet's database, after its session (cookie),
/// its role and, for a POST, its CSRF token are checked. Runs on the HTTP server's thread; the
/// database connection and the login throttle are behind one lock.
public final class Office: Sendable {
    struct State {
        let sql: FleetSQL
        let records: OfficeRecords
        var throttle: LoginThrottle
    }

    private let state: Mutex<State>
    private let settings: OfficeSettings
    let amounts: AmountFormatter
    let logger: Logger
    /// Sends the `price` commands; nil: this office sends none (its price pages say so).
    let commands: MachineCommands?
    /// How long a price change waits for the machines' answers.
    let commandTimeout: Duration
    let clock: @Sendable () -> Int64
    /// Verified against when the user name is unknown, so that a wrong name costs what a wrong
    /// password does.
    private let decoyHash: String

    static let sessionCookie = "vendoffice"
    static let loginCookie = "vendoffice_login"

    public init(
        sql: sending FleetSQL, settings: OfficeSettings, logger: Logger, throttleLimits: (perUser: Int, perAddress: Int)? = nil,
        commands: MachineCommands? = nil, commandTimeout: Duration = .seconds(5), clock: @escaping @Sendable () -> Int64
    ) throws {
        try Sodium.start()
        var limits = LoginThrottle.Limits()
        if let throttleLimits {
            limits.perUser = throttleLimits.perUser
            limits.perAddress = throttleLimits.perAddress
        }
        state = Mutex(State(sql: sql, records: OfficeRecords(sql), throttle: LoginThrottle(limits: limits)))
        self.settings = settings
        amounts = AmountFormatter(formats: settings.currencies)
        self.logger = logger
        self.commands = commands
        self.commandTimeout = commandTimeout
        self.clock = clock
        decoyHash = try Sodium.hashPassword(Sodium.randomToken())
    }

    /// Answers one request; never throws: a database error is a 503 page, logged.
    public func handle(_ request: OfficeRequest) -> OfficeResponse {
        let now = clock()
        do {
            return try state.withLock { state in try route(request, state: &state, now: now) }
        } catch {
            logger.error("office: \(request.method) \(request.path): \(error)")
            // The detail (SQL, the server's words) goes to the journal, not to the browser.
            return respond(
                503, Pages.message("Unavailable", "The database did not answer: try again shortly (the journal says why).", user: nil, csrf: nil))
        }
    }

    // MARK: Routing

    private func route(_ request: OfficeRequest, state: inout State, now: Int64) throws -> OfficeResponse {
        switch (request.method, request.path) {
        case ("GET", "/login"): return loginPage(message: nil, status: 200)
        case ("POST", "/login"): return try logIn(request, state: &state, now: now)
        case ("GET", _), ("POST", _): break
        default: return respond(405, Pages.message("Not allowed", "\(request.method) is not served here.", user: nil, csrf: nil))
        }
        guard let token = request.cookie(Self.sessionCookie), let session = try state.records.session(token: token, now: now) else {
            if request.method == "POST" {
                return respond(403, Pages.message("Not logged in", "Your session has ended: log in again.", user: nil, csrf: nil))
            }
            return redirect("/login")
        }
        let user = session.user
        if request.method == "POST" {
            guard let sent = request.form["csrf"], Sodium.equal(sent, session.csrf) else {
                logger.warning("office: \(request.path) refused: no or wrong CSRF token (user \(user.name), client \(client(of: request)))")
                return respond(
                    403,
                    Pages.message(
                        "Refused", "The form's security token is missing or wrong: reload the page and try again.", user: user, csrf: session.csrf))
            }
        }
        let operatorOnly: Set<String> = ["/audit", "/routes/delete", "/par", "/prices", "/prices/slot", "/prices/product", "/price-change"]
        if user.role != .operator_ && (operatorOnly.contains(request.path) || (request.method == "POST" && request.path == "/routes")) {
            return respond(403, Pages.message("Operators only", "Your role (\(user.role.rawValue)) may not do this.", user: user, csrf: session.csrf))
        }
        switch (request.method, request.path) {
        case ("POST", "/logout"):
            try state.records.closeSession(token: token)
            return redirect("/login", cookies: [expiredCookie(Self.sessionCookie)])
        case ("GET", "/"): return redirect("/fleet")
        case ("GET", "/fleet"): return try fleet(request, state: state, user: user, csrf: session.csrf, now: now)
        case ("GET", "/routes"):
            return respond(200, Pages.routes(try state.records.routes(), user: user, csrf: session.csrf, error: nil))
        case ("POST", "/routes"):
            let form = request.form
            let machines = (form["machines"] ?? "").split(whereSeparator: { $0 == "," || $0.isNewline }).map {
                String($0.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
            }.filter { !$0.isEmpty }
            do {
                try state.records.saveRoute(form["name"] ?? "", machines: machines, by: user.name, now: now)
            } catch let refusal as OfficeRecords.Refusal {
                return respond(400, Pages.routes(try state.records.routes(), user: user, csrf: session.csrf, error: refusal.description))
            }
            return redirect("/routes")
        case ("POST", "/routes/delete"):
            try state.records.deleteRoute(request.form["name"] ?? "", by: user.name, now: now)
            return redirect("/routes")
        case ("GET", "/pick-list"), ("GET", "/pick-list.csv"):
            guard let name = request.query["route"], let route = try state.records.route(named: name) else {
                return respond(404, Pages.message("No such route", "There is no route by that name.", user: user, csrf: session.csrf))
            }
            let list = try PickList.make(route: route, sql: state.sql, now: now)
            if request.path.hasSuffix(".csv") {
                return OfficeResponse(
                    status: 200,
                    headers: commonHeaders + [
                        ("Content-Type", "text/csv; charset=utf-8"), ("Content-Disposition", "attachment; filename=\"pick-list.csv\""),
                    ], body: Array(list.csv.utf8))
            }
            return respond(200, Pages.pickList(list, user: user, csrf: session.csrf))
        case ("POST", "/par"):
            let form = request.form
            let text = form["par"] ?? ""
            let par = Int64(text)
            guard let machine = form["machine"], let slot = form["slot"], text.isEmpty || (par.map { (0...100_000).contains($0) } ?? false) else {
                return respond(
                    400,
                    Pages.message("Not a par level", "A par level is a whole number from 0 (empty: the capacity).", user: user, csrf: session.csrf))
            }
            try state.records.setPar(machine: machine, slot: slot, par: par, by: user.name, now: now)
            return redirect("/pick-list?route=\(Pages.queryValue(form["route"] ?? ""))")
        case ("GET", "/machine"):
            guard let id = request.query["id"], let detail = try MachineDetail.load(id, sql: state.sql, recent: 30) else {
                return respond(404, Pages.message("No such machine", "The store has nothing from that machine.", user: user, csrf: session.csrf))
            }
            return respond(200, Pages.machine(detail, amounts: amounts, now: now, user: user, csrf: session.csrf))
        case ("GET", "/prices"):
            return try pricesPage(state: state, user: user, csrf: session.csrf, error: nil)
        case ("POST", "/prices/slot"), ("POST", "/prices/product"):
            return try changePrices(request, state: state, user: user, csrf: session.csrf, now: now)
        case ("GET", "/price-change"):
            return try priceChangePage(request.query["id"] ?? "", state: state, user: user, csrf: session.csrf)
        case ("GET", "/audit"):
            return respond(200, Pages.audit(try state.records.auditLog(limit: 500), user: user, csrf: session.csrf))
        default:
            return respond(404, Pages.message("Not found", "There is no page \(request.path).", user: user, csrf: session.csrf))
        }
    }

    private func fleet(_ request: OfficeRequest, state: State, user: OfficeUser, csrf: String, now: Int64) throws -> OfficeResponse {
        let today = Self.localMidnight(now, daysBack: 0)
        let machines = try FleetOverview(sql: state.sql).machines(now: now, todayStart: today, weekStart: Self.localMidnight(now, daysBack: 6))
        let sort = request.query["sort"].flatMap(Pages.FleetSort.init(rawValue:)) ?? .machine
        let filter = request.query["filter"].flatMap(Pages.FleetFilter.init(rawValue:)) ?? .all
        return respond(
            200, Pages.fleet(machines, sort: sort, filter: filter, search: request.query["q"] ?? "", amounts: amounts, user: user, csrf: csrf))
    }

    // MARK: Logging in

    private func loginPage(message: String?, status: Int) -> OfficeResponse {
        let csrf = Sodium.randomToken()
        var response = respond(status, Pages.login(csrf: csrf, message: message))
        response.headers.append(("Set-Cookie", cookie(Self.loginCookie, csrf, maxAge: 3600)))
        return response
    }

    private func logIn(_ request: OfficeRequest, state: inout State, now: Int64) throws -> OfficeResponse {
        let form = request.form
        let address = client(of: request)
        // Double submit: the form's token must be the cookie the login page set.
        guard let sent = form["csrf"], let expected = request.cookie(Self.loginCookie), Sodium.equal(sent, expected) else {
            logger.warning("office: login refused: no or wrong CSRF token (client \(address))")
            return loginPage(message: "The login form's security token is missing or wrong: try again.", status: 403)
        }
        let name = form["user"] ?? ""
        if let refusal = state.throttle.refusal(user: name, address: address, now: now) {
            logger.warning("office: login for '\(name)' from \(address) refused: \(refusal)")
            return loginPage(message: "Too many failed logins: wait 15 minutes and try again.", status: 429)
        }
        guard let user = try state.records.authenticate(name, password: form["password"] ?? "", decoyHash: decoyHash) else {
            state.throttle.failed(user: name, address: address, now: now)
            logger.notice("office: failed login for '\(name)' from \(address)")
            return loginPage(message: "Wrong user name or password.", status: 403)
        }
        state.throttle.succeeded(user: name)
        let lifetime = Int64(settings.sessionHours) * 3_600_000
        let session = try state.records.openSession(for: user, now: now, lifetime: lifetime)
        logger.info("office: \(user.name) (\(user.role.rawValue)) logged in from \(address)")
        return redirect(
            "/fleet", cookies: [cookie(Self.sessionCookie, session.token, maxAge: lifetime / 1000), expiredCookie(Self.loginCookie)])
    }

    /// The client: the peer, or behind the configured TLS proxy (a loopback peer) the address
    /// the proxy appended last to X-Forwarded-For.
    private func client(of request: OfficeRequest) -> String {
        guard settings.tlsProxy, request.peer == "::1" || request.peer.hasPrefix("127."),
            let forwarded = request.headers["x-forwarded-for"]?.split(separator: ",").last
        else { return request.peer }
        return String(forwarded.filter { $0 != " " })
    }

    // MARK: Answers

    private var commonHeaders: [(String, String)] {
        [
            ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
            ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        ]
    }

    func respond(_ status: Int, _ page: String) -> OfficeResponse {
        OfficeResponse(status: status, headers: commonHeaders + [("Content-Type", "text/html; charset=utf-8")], body: Array(page.utf8))
    }

    func redirect(_ location: String, cookies: [String] = []) -> OfficeResponse {
        OfficeResponse(status: 303, headers: commonHeaders + [("Location", location)] + cookies.map { ("Set-Cookie", $0) })
    }

    private func cookie(_ name: String, _ value: String, maxAge: Int64) -> String {
        "\(name)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict\(settings.tlsProxy ? "; Secure" : "")"
    }

    private func expiredCookie(_ name: String) -> String { cookie(name, "", maxAge: 0) }

    /// Milliseconds since the epoch of the local midnight `daysBack` days before `now`'s day.
    static func localMidnight(_ now: Int64, daysBack: Int) -> Int64 {
        var seconds = time_t(now / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        parts.tm_hour = 0
        parts.tm_min = 0
        parts.tm_sec = 0
        parts.tm_mday -= Int32(daysBack)
        parts.tm_isdst = -1
        return Int64(mktime(&parts)) * 1000
    }
}
