import Synchronization
import VendTime
import VendingCore

/// What all payout devices together paid for one payout.
public struct PayoutBankResult: Sendable, Hashable {
    public let paid: Money
    public let unknown: Money
    /// Each device's payout counter after it, by identity (devices that keep one).
    public let counters: [String: UInt64]
}

/// The payout devices as one ordered queue. A payout goes to the devices one after another,
/// largest coin first, each paying what it can of what is left; payouts run one at a time, in
/// the order asked. Decides no amounts: it carries out the machine's.
public final class PayoutBank: Sendable {
    public typealias Completion = @Sendable (PayoutBankResult) -> Void

    /// Gets a device's identity, and what it holds when it says (see `PayoutDevice.pay`).
    public typealias Asking = @Sendable (String, [ChangeStock]?) -> Void

    private struct Request {
        let amount: Money
        let asking: Asking
        let completion: Completion
    }

    private struct Queue {
        var waiting: [Request] = []
        var busy = false
    }

    public let devices: [any PayoutDevice]
    private let timekeeper: any Timekeeper
    private let queue = Mutex(Queue())
    /// Set by `emergencyStop`: no device is asked to pay any more.
    private let stopped = Atomic(false)

    /// `devices` in the order they are asked: put the largest coin first.
    public init(devices: [any PayoutDevice], timekeeper: any Timekeeper) {
        self.devices = devices
        self.timekeeper = timekeeper
    }

    /// What all devices can pay now, per coin value.
    public func inventory() -> [ChangeStock] {
        devices.flatMap { $0.inventory() }
    }

    /// True when a device knows its coins only by a level sensor (a ccTalk hopper).
    public var hasLevelSensedCoins: Bool { devices.contains { $0.levelReading() != nil } }

    /// Reports the bank's whole inventory (`.changeInventory`) whenever a device's coins change
    /// other than by its payouts.
    public func reportInventory(to report: @escaping DeviceReportHandler) {
        for device in devices { device.watchInventory { [self] in report(.changeInventory(inventory())) } }
    }

    /// Pays `amount` through the devices. Before each device is told, `asking` gets its identity
    /// and what it holds (the caller makes that durable); `completion` gets the total, exactly
    /// once. Both run on the timekeeper or a device's thread, never from within this call.
    public func pay(_ amount: Money, asking: @escaping Asking, completion: @escaping Completion) {
        let startNow = queue.withLock { queue in
            queue.waiting.append(Request(amount: amount, asking: asking, completion: completion))
            guard !queue.busy else { return false }
            queue.busy = true
            return true
        }
        if startNow { timekeeper.schedule(after: .zero) { [self] in startNext() } }
    }

    private func startNext() {
        guard
            let request = queue.withLock({ queue -> Request? in
                guard !queue.waiting.isEmpty else {
                    queue.busy = false
                    return nil
                }
                return queue.waiting.removeFirst()
            })
        else { return }
        let zero = Money.zero(request.amount.currency)
        pay(request, from: 0, sofar: PayoutBankResult(paid: zero, unknown: zero, counters: [:]))
    }

    private func pay(_ request: Request, from index: Int, sofar: PayoutBankResult) {
        let rest = request.amount - sofar.paid - sofar.unknown
        guard index < devices.count, rest.minorUnits > 0, !stopped.load(ordering: .acquiring) else {
            request.completion(sofar)
            return startNext()
        }
        let device = devices[index]
        device.pay(rest, asked: { holding in request.asking(device.identity, holding) }) { [self] result in
            var counters = sofar.counters
            if let counter = result.counter { counters[device.identity] = counter }
            pay(
                request, from: index + 1,
                sofar: PayoutBankResult(
                    paid: sofar.paid + result.paid, unknown: sofar.unknown + result.unknown, counters: counters))
        }
    }

    /// The devices' payout counters now, for the machine to keep when no payout is in flight.
    public func counters() -> [String: UInt64] {
        devices.reduce(into: [:]) { counters, device in
            if let counter = device.lastPayout().counter { counters[device.identity] = counter }
        }
    }

    /// How a payout in flight when vendd stopped was resolved: the total, and what each device
    /// that was asked said of its part, for the log.
    public struct Resolution: Sendable {
        public let result: PayoutBankResult
        public let findings: [(device: String, part: InterruptedPayoutPart)]
    }

    /// Resolves a payout of `amount` that was in flight when vendd stopped, never by paying
    /// again: a device not in `asked` paid nothing of it (with `asked` nil, not recorded, every
    /// device may have been asked); each asked device judges its part from its own evidence (its
    /// counter against the one `kept`, or what it held when asked, in `holdings`). If one cannot
    /// tell, or an asked device is no longer configured, the part not accounted for is unknown.
    /// `completion` runs once, when every asked device has judged (a changer only once it has
    /// reported its tubes).
    public func resolveInterrupted(
        _ amount: Money, counters kept: [String: UInt64], asked: [String]?, holdings: [String: [ChangeStock]],
        completion: @escaping @Sendable (Resolution) -> Void
    ) {
        let askedDevices = devices.filter { asked?.contains($0.identity) ?? true }
        let gone = (asked ?? []).filter { identity in !devices.contains { $0.identity == identity } }
        let zero = Money.zero(amount.currency)
        let findings = gone.map { (device: $0, part: InterruptedPayoutPart(paid: zero, cannotTell: "it was asked and is no longer configured")) }
        judge(
            askedDevices[...], amount: amount, kept: kept, holdings: holdings,
            sofar: InterruptedPayoutPart(paid: zero, cannotTell: findings.first?.part.cannotTell), findings: findings
        ) { [self] total, findings in
            let paid = min(total.paid, amount)
            let unknown = total.cannotTell == nil ? Money.zero(amount.currency) : amount - paid
            completion(Resolution(result: PayoutBankResult(paid: paid, unknown: unknown, counters: counters()), findings: findings))
        }
    }

    /// Asks each device in turn (one may answer later), adding up what they say.
    private func judge(
        _ devices: ArraySlice<any PayoutDevice>, amount: Money, kept: [String: UInt64], holdings: [String: [ChangeStock]],
        sofar: InterruptedPayoutPart,
        findings: [(device: String, part: InterruptedPayoutPart)],
        completion: @escaping @Sendable (InterruptedPayoutPart, [(device: String, part: InterruptedPayoutPart)]) -> Void
    ) {
        guard let device = devices.first else { return completion(sofar, findings) }
        let record = InterruptedPayoutRecord(amount: amount, keptCounter: kept[device.identity], holding: holdings[device.identity])
        device.resolveInterrupted(record) { [self] part in
            judge(
                devices.dropFirst(), amount: amount, kept: kept, holdings: holdings,
                sofar: InterruptedPayoutPart(paid: sofar.paid + part.paid, cannotTell: sofar.cannotTell ?? part.cannotTell),
                findings: findings + [(device.description, part)], completion: completion)
        }
    }

    /// Stops every device at once (shutdown): a payout in flight reports what was paid.
    public func emergencyStop() {
        stopped.store(true, ordering: .releasing)
        for device in devices { device.emergencyStop() }
    }
}
