import Synchronization
import VendControl
import VendPOSIX
import VendingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Follows vendd over its control socket: `watch` for events, `status` (and `history`, `sales`)
/// for the state they lead to. While vendd cannot be reached the machine is shown out of order,
/// and the follower keeps trying: vendd restarts are expected (reloads, upgrades, crashes).
/// It sends only what a customer can do at the machine (select, coin return) and, with the
/// service key on, restock; money is vendd's alone.
public final class MachineFollower: Sendable {
    public typealias Observer = @Sendable (FollowedMachine) -> Void

    private let socketPath: String
    private let currency: Currency
    private let state = Mutex(FollowedMachine())
    private let observers = Mutex<[Observer]>([])
    private let clock: @Sendable () -> Int64
    /// Between connection attempts while vendd is away.
    static let retryMicroseconds: useconds_t = 300_000

    public init(
        socketPath: String, currency: Currency,
        clock: @escaping @Sendable () -> Int64 = { WallClock.milliseconds }
    ) {
        self.socketPath = socketPath
        self.currency = currency
        self.clock = clock
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

    private func followForever() {
        while true {
            followUntilDisconnected()
            change { $0.status = nil }
            usleep(Self.retryMicroseconds)
        }
    }

    /// One connection's life. Not inlined into the loop above: the release optimiser's loop
    /// passes spent many minutes on the combined body.
    @inline(never)
    private func followUntilDisconnected() {
        do {
            let watcher = try ControlClient(path: socketPath)
            let queries = try ControlClient(path: socketPath)
            try refresh(queries)
            try watcher.watch { event in
                let now = clock()
                change { $0.observe(kind: event.kind, at: now) }
                do {
                    if event.kind == "vend-completed", let sale = try queries.send(.history(since: nil, limit: 1)).history?.sales.last {
                        change { $0.sold(sale, at: now) }
                    }
                    try refresh(queries)
                } catch {
                    // The watch connection ends too when vendd goes; the caller notices.
                }
                return true
            }
        } catch {
            // Not running, or going away: shown as out of order until it answers again.
        }
    }

    private func refresh(_ client: ControlClient) throws(ControlClient.ConnectionError) {
        guard let status = try client.send(.status).status else { return }
        let sales = status.serviceKey == true ? try client.send(.sales(since: nil)).sales : nil
        change {
            $0.status = status
            $0.sales = sales
        }
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
