import Logging
import Synchronization
import VendConfig
import VendFleetIngest
import VendFleetStore
import VendHTTP
import VendReports

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
        var stateMessages = StateMessageCache()
    }

    let state: Mutex<State>
    private let settings: OfficeSettings
    let amounts: AmountFormatter
    let logger: Logger
    let clock: @Sendable () -> Int64
    /// The live pages' server-sent events.
    let feed = LiveFeed()
    /// Sends the machines' `price` and `dex` commands; nil: this office sends none (its pages
    /// say so).
    let commands: MachineCommands?
    /// How long a price change waits for the machines' answers.
    let commandTimeout: Duration
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
        commands?.onAnswer { [weak self] answer in self?.received(answer) }
    }

    /// A machine's answer that no page waits for: a DEX file the office asked for is archived.
    func received(_ reply: MachineAnswer) {
        let now = clock()
        do {
            let archived = try state.withLock { try DEXArchive(sql: $0.sql).received(reply, at: now) }
            if archived {
                logger.info("office: DEX audit of \(reply.machine) archived (\(reply.payload.count) bytes)")
            } else {
                logger.warning("office: an answer from \(reply.machine) matches no open DEX request (late, or not asked here); not kept")
            }
        } catch {
            logger.error("office: cannot archive the DEX answer of \(reply.machine): \(error)")
        }
    }

    /// Answers one request; never throws: a database error is a 503 page, logged. `GET /events`
    /// with a session is the live pages' stream.
    public func handle(_ request: HTTPRequest) -> HTTPReply {
        guard request.method == "GET", request.path == "/events" else { return .response(answer(request)) }
        let now = clock()
        do {
            let session = try request.cookie(Self.sessionCookie).flatMap { token in
                try state.withLock { try $0.records.session(token: token, now: now) }
            }
            return session == nil ? .response(redirect("/login")) : .events(feed.broadcast)
        } catch {
            return .response(unavailable(request, error))
        }
    }

    private func answer(_ request: HTTPRequest) -> HTTPResponse {
        let now = clock()
        do {
            var order: PriceChangeOrder?
            let response = try state.withLock { state in try route(request, state: &state, now: now, order: &order) }
            if let order { try send(order) }
            return response
        } catch {
            return unavailable(request, error)
        }
    }

    /// A database error: logged, and a 503 page.
    private func unavailable(_ request: HTTPRequest, _ error: any Error) -> HTTPResponse {
        logger.error("office: \(request.method) \(request.path): \(error)")
        // The detail (SQL, the server's words) goes to the journal, not to the browser.
        return respond(
            503, Pages.message("Unavailable", "The database did not answer: try again shortly (the journal says why).", user: nil, csrf: nil))
    }

    // MARK: Routing

    /// A price change's commands come out in `order`, to be sent once the lock is released.
    private func route(_ request: HTTPRequest, state: inout State, now: Int64, order: inout PriceChangeOrder?) throws -> HTTPResponse {
        switch (request.method, request.path) {
        case ("GET", "/login"): return loginPage(message: nil, status: 200)
        case ("GET", "/office.js"):
            return HTTPResponse(
                status: 200, headers: commonHeaders + [("Content-Type", "text/javascript; charset=utf-8")], body: Array(OfficeScript.source.utf8))
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
        // /dex.txt: a DEX file holds the prices.
        let operatorOnly: Set<String> = [
            "/audit", "/routes/delete", "/par", "/dex.txt", "/prices", "/prices/slot", "/prices/product", "/price-change",
        ]
        if user.role != .operator_ && (operatorOnly.contains(request.path) || (request.method == "POST" && request.path == "/routes")) {
            return respond(403, Pages.message("Operators only", "Your role (\(user.role.rawValue)) may not do this.", user: user, csrf: session.csrf))
        }
        switch (request.method, request.path) {
        case ("POST", "/logout"):
            try state.records.closeSession(token: token)
            return redirect("/login", cookies: [expiredCookie(Self.sessionCookie)])
        case ("GET", "/"): return redirect("/fleet")
        case ("GET", "/fleet"): return try fleet(request, state: &state, user: user, csrf: session.csrf, now: now)
        case ("GET", "/visit"):
            let (machines, weekStart) = try overview(&state, now: now)
            let ranked = try VisitRanking(sql: state.sql).rank(machines, weekStart: weekStart)
            return respond(200, Pages.visit(ranked, machines: machines.count, amounts: amounts, user: user, csrf: session.csrf))
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
                return HTTPResponse(
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
            let charts = MachineCharts(sql: state.sql, amounts: amounts)
            let sales = try charts.salesCharts(of: id, now: now, prices: user.role == .operator_)
            let shown = MachinePageCharts(
                days: sales.days, products: sales.products, zones: try charts.zoneCharts(of: id, zones: detail.zones, now: now))
            let dex = try DEXArchive(sql: state.sql).latest(of: id)
            return respond(200, Pages.machine(detail, charts: shown, dex: dex, amounts: amounts, now: now, user: user, csrf: session.csrf))
        case ("GET", "/cash"):
            let id = request.query["id"] ?? ""
            let records = try CollectionBook(state.sql).collections(of: id)
            return respond(
                200, Pages.cash(machine: id, records: records, chart: cashChart(records), amounts: amounts, user: user, csrf: session.csrf))
        case ("GET", "/collection"), ("POST", "/collection"):
            return try collection(request, state: state, user: user, csrf: session.csrf, now: now)
        case ("POST", "/dex"):
            return try requestDEX(request.form["id"] ?? "", state: state, user: user, csrf: session.csrf, now: now)
        case ("GET", "/dex.txt"):
            guard let audit = try DEXArchive(sql: state.sql).audit(request.query["request"] ?? ""), let file = audit.file else {
                return respond(404, Pages.message("No such DEX file", "There is no archived DEX file by that name.", user: user, csrf: session.csrf))
            }
            let name = String(audit.machine.map { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) ? $0 : "_" })
            return HTTPResponse(
                status: 200,
                headers: commonHeaders + [
                    ("Content-Type", "text/plain; charset=utf-8"),
                    ("Content-Disposition", "attachment; filename=\"\(name)-dex-\(audit.receivedAt ?? audit.requestedAt).txt\""),
                ], body: Array(file.utf8))
        case ("GET", "/prices"):
            return try pricesPage(state: state, user: user, csrf: session.csrf, error: nil)
        case ("POST", "/prices/slot"), ("POST", "/prices/product"):
            return try changePrices(request, state: state, user: user, csrf: session.csrf, now: now, order: &order)
        case ("GET", "/price-change"):
            return try priceChangePage(request.query["id"] ?? "", state: state, user: user, csrf: session.csrf)
        case ("GET", "/audit"):
            return respond(200, Pages.audit(try state.records.auditLog(limit: 500), user: user, csrf: session.csrf))
        default:
            return respond(404, Pages.message("Not found", "There is no page \(request.path).", user: user, csrf: session.csrf))
        }
    }

    private func fleet(_ request: HTTPRequest, state: inout State, user: OfficeUser, csrf: String, now: Int64) throws -> HTTPResponse {
        let machines = try overview(&state, now: now).machines
        let sort = request.query["sort"].flatMap(Pages.FleetSort.init(rawValue:)) ?? .machine
        let filter = request.query["filter"].flatMap(Pages.FleetFilter.init(rawValue:)) ?? .all
        return respond(
            200, Pages.fleet(machines, sort: sort, filter: filter, search: request.query["q"] ?? "", amounts: amounts, user: user, csrf: csrf))
    }

    /// The fleet page's machines, and the first of its 7 days (box-local, `LocalDay`).
    private func overview(_ state: inout State, now: Int64) throws -> (machines: [MachineSummary], weekStart: Int64) {
        let weekStart = LocalDay.of(Self.localMidnight(now, daysBack: 6))
        let overview = FleetOverview(sql: state.sql, alerts: .init(outboxEvents: settings.outboxAlertEvents, dexDays: settings.dexAlertDays))
        return (try overview.machines(now: now, today: LocalDay.of(now), weekStart: weekStart, states: &state.stateMessages), weekStart)
    }

    // MARK: Cash and DEX

    /// A collection's page, and the driver's count entered through its form: checked, stored
    /// and audited in one transaction (a new entry replaces the last, whose figures the audit
    /// line repeats).
    private func collection(_ request: HTTPRequest, state: State, user: OfficeUser, csrf: String, now: Int64) throws -> HTTPResponse {
        let form = request.method == "POST" ? request.form : [:]
        let machine = (request.method == "POST" ? form["id"] : request.query["id"]) ?? ""
        let seq = (request.method == "POST" ? form["seq"] : request.query["seq"]).flatMap { Int64($0) }
        let book = CollectionBook(state.sql)
        let records = try book.collections(of: machine)
        guard let record = records.first(where: { $0.seq == seq }) else {
            return respond(404, Pages.message("No such collection", "The store holds no such collection of that machine.", user: user, csrf: csrf))
        }
        let known = CashEntry.known(records)
        guard request.method == "POST" else {
            return respond(200, Pages.collection(record, known: known, amounts: amounts, user: user, csrf: csrf, error: nil, typed: nil))
        }
        let counts: [DenominationCount]
        switch CashEntry.parse(form, known: known, machineTotal: record.columns.total) {
        case .success(let parsed): counts = parsed
        case .failure(let refusal):
            return respond(
                400, Pages.collection(record, known: known, amounts: amounts, user: user, csrf: csrf, error: refusal.description, typed: form))
        }
        let entry = CountedCollection(denominations: counts, enteredBy: user.name, enteredAt: now)
        try state.sql.transaction {
            try book.recordCount(machine: machine, seq: record.seq, counted: entry)
            let stored = CollectionRecord(machine: machine, seq: record.seq, at: record.at, columns: record.columns, counted: entry)
            var detail = "\(machine) collection \(record.columns.number) (event \(record.seq)): "
            detail += counts.map { "\($0.kind.rawValue) \($0.value) × \($0.count)" }.joined(separator: ", ")
            detail += "; counted \(stored.countedTotal ?? "-"), machine \(record.columns.total), difference \(stored.difference ?? "-")"
            if let previous = record.counted {
                detail += "; replaces \(previous.enteredBy)'s of \(Pages.localTime(previous.enteredAt)) (counted \(record.countedTotal ?? "-"))"
            }
            try state.records.audit(actor: user.name, action: "cash-counted", detail: detail, now: now)
        }
        return redirect("/collection?id=\(Pages.queryValue(machine))&seq=\(record.seq)")
    }

    /// Cash per collection: what the machine counted in and what the driver counted, side by side.
    private func cashChart(_ records: [CollectionRecord]) -> String {
        let shown = records.suffix(20)
        let currency = shown.last?.columns.currency ?? ""
        let same = shown.filter { $0.columns.currency == currency }
        let digits = same.map { Amount($0.columns.total)?.digits ?? 0 }.max() ?? 0
        func units(_ text: String?) -> Int64 { text.flatMap(Amount.init).map { $0.units(at: digits) } ?? 0 }
        let formatter = amounts
        return ColumnChart(
            title: "Cash per collection", series: ["machine counted", "driver counted"],
            categories: same.map { .init(label: "#\($0.columns.number)", values: [units($0.columns.total), units($0.countedTotal)]) }, stacked: false,
            emptyText: "no collection", valueText: { formatter.string(Amount(units: $0, digits: digits), currency: currency) }
        ).svgElement
    }

    /// Publishes the `dex` command to `machine` and notes the request; the machine page shows
    /// the answer when it comes, or after `DEXArchive.timeout` that none came.
    private func requestDEX(_ machine: String, state: State, user: OfficeUser, csrf: String, now: Int64) throws -> HTTPResponse {
        guard try MachineDetail.load(machine, sql: state.sql, recent: 0) != nil else {
            return respond(404, Pages.message("No such machine", "The store has nothing from that machine.", user: user, csrf: csrf))
        }
        guard let commands else {
            return respond(503, Pages.message("No broker", "This office sends no commands to machines.", user: user, csrf: csrf))
        }
        let request: String
        do {
            request = try commands.post(
                "dex", payload: Array("{\"sender\":\"vendstore office: \(user.name)\"}".utf8), to: machine, expiry: .milliseconds(DEXArchive.timeout))
        } catch {
            logger.warning("office: DEX request to \(machine) not sent: \(error)")
            return respond(
                503, Pages.message("Not sent", "The broker is not connected: the request was not sent. Try again shortly.", user: user, csrf: csrf))
        }
        try state.sql.transaction {
            try DEXArchive(sql: state.sql).requested(request, machine: machine, by: user.name, at: now)
            try state.records.audit(actor: user.name, action: "dex-requested", detail: machine, now: now)
        }
        return redirect("/machine?id=\(Pages.queryValue(machine))#dex")
    }

    // MARK: Logging in

    private func loginPage(message: String?, status: Int) -> HTTPResponse {
        let csrf = Sodium.randomToken()
        var response = respond(status, Pages.login(csrf: csrf, message: message))
        response.headers.append(("Set-Cookie", cookie(Self.loginCookie, csrf, maxAge: 3600)))
        return response
    }

    private func logIn(_ request: HTTPRequest, state: inout State, now: Int64) throws -> HTTPResponse {
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
    private func client(of request: HTTPRequest) -> String {
        guard settings.tlsProxy, request.peer == "::1" || request.peer.hasPrefix("127."),
            let forwarded = request.headers["x-forwarded-for"]?.split(separator: ",").last
        else { return request.peer }
        return String(forwarded.filter { $0 != " " })
    }

    // MARK: Answers

    private var commonHeaders: [(String, String)] {
        [
            ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
            (
                "Content-Security-Policy",
                "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
            ),
        ]
    }

    func respond(_ status: Int, _ page: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: commonHeaders + [("Content-Type", "text/html; charset=utf-8")], body: Array(page.utf8))
    }

    func redirect(_ location: String, cookies: [String] = []) -> HTTPResponse {
        HTTPResponse(status: 303, headers: commonHeaders + [("Location", location)] + cookies.map { ("Set-Cookie", $0) })
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
