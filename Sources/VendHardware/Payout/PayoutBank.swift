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

    private struct Request {
        let amount: Money
        let asking: @Sendable (String) -> Void
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

    /// Pays `amount` through the devices. Before each device is told, `asking` gets its identity
    /// (the caller makes that durable); `completion` gets the total, exactly once. Both run on
    /// the timekeeper or a device's thread, never from within this call.
    public func pay(_ amount: Money, asking: @escaping @Sendable (String) -> Void, completion: @escaping Completion) {
        let startNow = queue.withLock { queue in
            queue.waiting.append(Request(amount: amount, asking: asking, completion: completion))
            guard !queue.busy else { return false }
            queue.busy = true
            return true
        }
        if startNow { timekeeper.schedule(after: .zero) { [self] in startNext() } }
    }

    private func startNext() {
        guard let request = queue.withLock({ queue -> Request? in
            guard !queue.waiting.isEmpty else {
                queue.busy = false
                return nil
            }
            return queue.waiting.removeFirst()
        }) else { return }
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
        request.asking(device.identity)
        device.pay(rest) { [self] result in
            var counters = sofar.counters
            if let counter = result.counter { counters[device.identity] = counter }
            pay(request, from: index + 1, sofar: PayoutBankResult(
                paid: sofar.paid + result.paid, unknown: sofar.unknown + result.unknown, counters: counters))
        }
    }

    /// The devices' payout counters now, for the machine to keep when no payout is in flight.
    public func counters() -> [String: UInt64] {
        devices.reduce(into: [:]) { counters, device in
            if let counter = device.lastPayout().counter { counters[device.identity] = counter }
        }
    }

    /// Resolves a payout of `amount` that was in flight when vendd stopped, from what each device
    /// reports, never by paying again. A device not in `asked` paid nothing of it (with `asked`
    /// nil, not recorded, every device may have been asked). An asked device
    /// whose counter moved past the one kept in `counters` made its part, as its report says; one
    /// whose counter did not move was never told. One that cannot tell (counter 0: reset since
    /// its power-up, or no counter kept) makes the part not accounted for unknown.
    public func resolveInterrupted(_ amount: Money, counters kept: [String: UInt64], asked: [String]?) -> PayoutBankResult {
        var paid = Money.zero(amount.currency)
        var cannotTell = false
        var counters: [String: UInt64] = [:]
        for device in devices {
            let report = device.lastPayout()
            if let counter = report.counter { counters[device.identity] = counter }
            guard asked?.contains(device.identity) ?? true else { continue }
            if report.isUnknown || report.counter == 0 {
                cannotTell = true
            } else if let counter = report.counter {
                guard let before = kept[device.identity] else {
                    cannotTell = true
                    continue
                }
                if counter != before { paid += report.paid }
            } else {
                paid += report.paid
            }
        }
        paid = min(paid, amount)
        return PayoutBankResult(paid: paid, unknown: cannotTell ? amount - paid : .zero(amount.currency), counters: counters)
    }

    /// Stops every device at once (shutdown): a payout in flight reports what was paid.
    public func emergencyStop() {
        stopped.store(true, ordering: .releasing)
        for device in devices { device.emergencyStop() }
    }
}
