import Synchronization
import VendControl
import VendPOSIX
import VendingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Follows vendd over its control socket: `watch` for events, `status` (and `history`, `sales`)
/// for the state they lead to. While vendd cannot be reached the machine is shown out of order,
/// and the follower keeps trying: vendd restarts are expected (reloads, upgrades, crashes). A lost
/// connection is logged once, with what the display does about it.
/// It sends only what a customer can do at the machine (select, coin return) and, with the
/// service key on, restock; money is vendd's alone.
public final class MachineFollower: Sendable {
    public typealias Observer = @Sendable (FollowedMachine) -> Void

    private let socketPath: String
    private let currency: Currency
    private let state = Mutex(FollowedMachine())
    private let observers = Mutex<[Observer]>([])
    private let clock: @Sendable () -> Int64
    /// Where the follower says what happened to its connections (the journal, under systemd).
    private let log: @Sendable (String) -> Void
    /// Between connection attempts while vendd is away.
    static let retryMicroseconds: useconds_t = 300_000

    public init(
        socketPath: String, currency: Currency,
        clock: @escaping @Sendable () -> Int64 = { WallClock.milliseconds }, log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.socketPath = socketPath
        self.currency = currency
        self.clock = clock
        self.log = log
    }

    public var current: FollowedMachine { state.withLock { $0 } }

    /// What vendd answered to an action.
    public enum Answer: Sendable, Equatable {
        case done(String)
        case refused(String)
    }

    /// `observer` gets the machine now and after every change, on the follower's threads.
    public func observe(_ observer: @escaping Observer) {
        state.withLock { machine in
            observers.withLock { $0.append(observer) }
            observer(machine)
        }
    }

    /// Starts the event thread and the one-second tick.
    public func start() {
        PosixThread.start(name: "display-follow") { [self] in followForever() }
        PosixThread.start(name: "display-tick") { [self] in
            while true {
                sleep(1)
                tick()
            }
        }
    }

    @inline(never)
    private func tick() {
        let now = clock()
        change { $0.tick(at: now) }
        // A time band began or ended: no event says so, and the prices it brings are in the
        // status. A failed query is the event thread's to notice.
        if let next = current.status?.nextPriceChange, now >= next { try? refresh(after: nil) }
    }

    // MARK: - Customer actions

    /// A tap on a product. vendd decides; when it refuses, the customer is told why in their words.
    public func select(_ slot: String) {
        let before = current
        switch send(.select(slot: slot)) {
        case .done, nil: break
        case .refused(let reason):
            change { $0.post(Self.explain(refusal: reason, selecting: slot, in: before, currency: currency), at: clock()) }
        }
    }

    public func coinReturn() {
        let credit = current.status?.credit ?? "0"
        let hasCredit = credit.contains { $0 != "0" && $0 != "." }
        switch send(.coinReturn) {
        case nil: break
        case .done: if hasCredit { change { $0.post(.refunded(amount: credit), at: clock()) } }
        case .refused: change { $0.post(hasCredit ? .noChange : .nothingToReturn, at: clock()) }
        }
    }

    /// Fills a slot to capacity (the technician's screen): what vendd did or why not; nil when it
    /// cannot be reached.
    public func restock(_ slot: String) -> Answer? {
        send(.restock(slot: slot, count: nil))
    }

    /// Why a selection was refused, from what the display knew when the customer tapped.
    static func explain(refusal: String, selecting slot: String, in machine: FollowedMachine, currency: Currency) -> Notice {
        guard let status = machine.status, let info = status.slots.first(where: { $0.id == slot }) else { return .refused(refusal) }
        if status.vendInProgress != nil { return .busy }
        if info.fault != nil { return .outOfService(product: info.product) }
        if info.healthLock != nil || info.expired != nil { return .notAvailable(product: info.product) }
        if info.available == 0 { return .soldOut(product: info.product) }
        // vendd's words (Rejection.noAgeVerifier): the display has its own for it.
        if refusal.contains("no age verifier") { return .ageNoVerifier }
        if let price = try? Money(parsing: info.price, currency: currency),
            let credit = try? Money(parsing: status.credit, currency: currency), credit < price
        {
            return .insertMore(product: info.product, missing: (price - credit).decimalString)
        }
        return .refused(refusal)
    }

    /// nil when vendd cannot be reached (the page already says out of order).
    private func send(_ command: ControlCommand) -> Answer? {
        // A connection per action: actions are rare, and a broken one never blocks the next.
        guard let response = try? ControlClient(path: socketPath).send(command) else { return nil }
        return response.ok ? .done(response.message ?? "") : .refused(response.error?.message ?? "refused")
    }

    // MARK: - Following

    /// How the display stands with vendd, for the log: each change is said once.
    private enum Link { case starting, following, lost }
    private let link = Mutex(Link.starting)

    /// Why the follower gave up on a connection, in words for the log.
    private struct Lost: Error, CustomStringConvertible {
        let description: String
    }

    private func followForever() {
        while true {
            let why = followUntilDisconnected()
            // Never a credit vendd may not hold: out of order until vendd answers again.
            change { $0.update(status: nil, sales: nil, currency: currency, at: clock()) }
            link.withLock { link in
                guard link != .lost else { return }
                link = .lost
                log("\(why): the display shows the machine out of order and tries again every \(Self.retryMicroseconds / 1000) ms")
            }
            usleep(Self.retryMicroseconds)
        }
    }

    /// One watch connection's life; returns why it ended. Not inlined into the loop above: the
    /// release optimiser's loop passes spent many minutes on the combined body.
    ///
    /// The queries an event leads to (`status`, `history`, `sales`) go on a connection of their
    /// own, opened for that event and closed after it: vendd hangs up a connection that has been
    /// quiet for 60 s, and one kept from one customer to the next was found closed at the next
    /// coin. A query that fails is asked again on a fresh connection; when that fails too, vendd
    /// is lost: the watch is dropped and the follower connects again from the start.
    @inline(never)
    private func followUntilDisconnected() -> String {
        var failure: String?
        do {
            let watcher = try ControlClient(path: socketPath)
            // Subscribed first, then read: nothing that happens in between is missed.
            try watcher.watch(subscribed: { try refresh(after: nil) }) { event in
                do {
                    try refresh(after: event)
                    return true
                } catch {
                    failure = "\(error)"
                    return false
                }
            }
            return failure ?? "vendd at \(socketPath) ended its event stream (it stopped or restarted)"
        } catch {
            return failure ?? "\(error)"
        }
    }

    /// What `event` says (nil: nothing yet, on connecting), then vendd's status as it is now.
    /// Throws when vendd cannot be asked, even on a fresh connection.
    private func refresh(after event: EventLine?) throws {
        let now = clock()
        if let event { change { $0.observe(kind: event.kind, at: now) } }
        try withQueryConnection { queries in
            if event?.kind == "vend-completed", let sale = try Self.answer(queries.send(.history(since: nil, limit: 1)), \.history)?.sales.last {
                change { $0.sold(sale, at: now) }
            }
            guard let status = try Self.answer(queries.send(.status), \.status) else {
                throw Lost(description: "vendd at \(socketPath) answered `status` without the status")
            }
            let sales = status.serviceKey == true ? try Self.answer(queries.send(.sales(since: nil)), \.sales) : nil
            change { $0.update(status: status, sales: sales, currency: currency, at: now) }
        }
        link.withLock { link in
            switch link {
            case .starting: log("following vendd at \(socketPath)")
            case .lost: log("vendd answers at \(socketPath) again: the display follows it")
            case .following: break
            }
            link = .following
        }
    }

    /// Bounds the wait for an answer to a query: a vendd that stopped answering is lost.
    static let queryTimeout: Duration = .seconds(10)

    /// Runs `body` on a new connection, and once more on another if that fails.
    private func withQueryConnection(_ body: (ControlClient) throws -> Void) throws {
        do {
            try body(try ControlClient(path: socketPath, timeout: Self.queryTimeout))
        } catch {
            log("a query to vendd failed (\(error)); asking again on a new connection")
            try body(try ControlClient(path: socketPath, timeout: Self.queryTimeout))
        }
    }

    /// A refused query (vendd full: `busy`) is a failure, like a lost connection.
    private static func answer<Report>(_ response: ControlResponse, _ report: KeyPath<ControlResponse, Report?>) throws -> Report? {
        guard response.ok else { throw Lost(description: "vendd refused the display's query: \(response.error?.message ?? "no reason given")") }
        return response[keyPath: report]
    }

    /// Observers are called under the lock, so every one sees the changes in the order they were
    /// made (the tick and the event thread both change the machine). They must not call back.
    private func change(_ body: (inout FollowedMachine) -> Void) {
        state.withLock { machine in
            let before = machine
            body(&machine)
            guard machine != before else { return }
            for observer in observers.withLock({ $0 }) { observer(machine) }
        }
    }
}
