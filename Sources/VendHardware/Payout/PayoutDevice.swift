import VendingCore

/// How one device's part of a payout ended, read back from the device.
public struct PayoutDeviceResult: Sendable, Hashable {
    /// What was asked, paid, provably not paid, and so unknown (see `PayoutTally`).
    public let tally: PayoutTally
    /// The device's payout counter after this payout, if it keeps one (ccTalk hopper event
    /// counter); recorded durably with the payout's end.
    public let counter: UInt64?

    public init(_ tally: PayoutTally, counter: UInt64?) {
        self.tally = tally
        self.counter = counter
    }

    /// What left the machine.
    public var paid: Money { tally.paid }
    /// What may or may not have left it (the device lost track, or may still be paying).
    public var unknown: Money { tally.unknown }
}

/// What a device says, without paying, about the last payout it made: read at start to resolve a
/// payout that was in flight when vendd stopped.
public struct LastPayoutReport: Sendable, Hashable {
    /// The device's payout counter now, or nil if it keeps none. As a ccTalk hopper's event
    /// counter: 0 after power-up or reset (the last payout cannot be told), then 1…255.
    public let counter: UInt64?
    /// What its last payout paid and left unpaid, if the device can tell.
    public let paid: Money
    public let unpaid: Money
    /// True when the device cannot tell (it was reset, or it keeps no record): the part of the
    /// payout it may have made is unknown.
    public let isUnknown: Bool

    public init(counter: UInt64?, paid: Money, unpaid: Money, isUnknown: Bool) {
        self.counter = counter
        self.paid = paid
        self.unpaid = unpaid
        self.isUnknown = isUnknown
    }
}

/// What the machine kept about one asked device's part of a payout that was in flight when
/// vendd stopped: the evidence the device judges it by.
public struct InterruptedPayoutRecord: Sendable, Hashable {
    /// The whole payout: no device paid more of it.
    public let amount: Money
    /// The device's payout counter after its last payout before this one, if it keeps one.
    public let keptCounter: UInt64?
    /// What it said it held just before it was told (a device without a counter), if it did.
    public let holding: [ChangeStock]?

    public init(amount: Money, keptCounter: UInt64?, holding: [ChangeStock]?) {
        self.amount = amount
        self.keptCounter = keptCounter
        self.holding = holding
    }
}

/// A device's judgement of its part of an interrupted payout.
public struct InterruptedPayoutPart: Sendable, Hashable {
    /// What it paid of it for certain.
    public let paid: Money
    /// Why it cannot tell the rest, if it cannot: then the part not accounted for is unknown.
    public let cannotTell: String?

    public init(paid: Money, cannotTell: String?) {
        self.paid = paid
        self.cannotTell = cannotTell
    }
}

/// What a payout device's level sensors say about its coins, when it has sensors instead of a
/// count (a ccTalk hopper's low and high level sensors, Part 2 §3.39).
public enum CoinLevelReading: String, Sendable {
    /// Below the low level sensor's mark.
    case low
    /// Between the marks, or above the low mark when no high sensor is fitted.
    case ok
    /// At or above the high level sensor's mark.
    case high
}

/// A device that hands coins back: a ccTalk hopper (one coin value), an MDB coin changer (tubes
/// of several values), or a simulated one. Drivers pay and report; they never decide amounts.
public protocol PayoutDevice: AnyObject, Sendable {
    /// For logs and `vendctl status`, e.g. "ccTalk hopper at address 3 (1 EUR)".
    var description: String { get }
    /// A name stable across restarts (protocol, address, serial number), under which the machine
    /// keeps this device's payout counter.
    var identity: String { get }
    /// The coins it can pay now, smallest value first; a nil count when it cannot count them.
    func inventory() -> [ChangeStock]
    /// What its level sensors say, if it has any; nil for a device that counts, or has none.
    func levelReading() -> CoinLevelReading?
    /// From now on, calls `changed` (from the device's own thread) whenever what it holds changes
    /// other than by its payouts, e.g. a hopper refilled by hand: read `inventory()` then.
    func watchInventory(_ changed: @escaping @Sendable () -> Void)
    /// Pays as much of `amount` as it can in its coins (never more). `completion` is called
    /// exactly once, with what was really paid, from the device's own thread or timer — never
    /// from within this call.
    func pay(_ amount: Money, completion: @escaping @Sendable (PayoutDeviceResult) -> Void)
    /// Pays like `pay(_:completion:)`, calling `asked` before it tells the hardware (the caller
    /// makes that durable) with what it holds then, or nil if it keeps a counter instead. A device
    /// that reads what it holds while paying (an MDB changer's tubes) calls `asked` from its own
    /// thread, and again whenever coins go in or out of it other than by paying.
    func pay(
        _ amount: Money, asked: @escaping @Sendable ([ChangeStock]?) -> Void,
        completion: @escaping @Sendable (PayoutDeviceResult) -> Void)
    /// The one coin it pays, for a device of a single coin value (a hopper); nil for several.
    var singleCoin: Money? { get }
    /// Reads, without paying, what the device reports about its last payout.
    func lastPayout() -> LastPayoutReport
    /// Judges, never by paying, what it paid of a payout in flight when vendd stopped, from its
    /// own evidence. `completion` runs once, perhaps later (a device read only once it is up).
    func resolveInterrupted(_ record: InterruptedPayoutRecord, completion: @escaping @Sendable (InterruptedPayoutPart) -> Void)
    /// Stops any payout at once (shutdown, fault); the payout's completion still reports what
    /// was paid up to then.
    func emergencyStop()
}

extension PayoutDevice {
    /// No level sensors.
    public func levelReading() -> CoinLevelReading? { nil }

    /// Coins of several values.
    public var singleCoin: Money? { nil }

    /// A device that holds only what its payouts leave (a simulated hopper, refilled through vendd)
    /// or reports its coins another way (an MDB changer, through its bus) has nothing to watch.
    public func watchInventory(_ changed: @escaping @Sendable () -> Void) {}

    /// A device with a payout counter is asked just before it is told, with nothing held.
    public func pay(
        _ amount: Money, asked: @escaping @Sendable ([ChangeStock]?) -> Void,
        completion: @escaping @Sendable (PayoutDeviceResult) -> Void
    ) {
        asked(nil)
        pay(amount, completion: completion)
    }

    /// By the payout counter (a ccTalk hopper's event counter): one that moved past the counter
    /// kept shows the device made its part, as its report says; one that did not move was never
    /// told. One that cannot tell (counter 0: reset since its power-up; no counter kept) leaves
    /// its part unknown. A device with no counter reports its last payout as it knows it.
    /// A single-coin device asked for less than its coin was told nothing: it paid nothing,
    /// whatever its counter says.
    public func resolveInterrupted(_ record: InterruptedPayoutRecord, completion: @escaping @Sendable (InterruptedPayoutPart) -> Void) {
        let nothing = Money.zero(record.amount.currency)
        if let coin = singleCoin, record.amount < coin {
            return completion(InterruptedPayoutPart(paid: nothing, cannotTell: nil))
        }
        let report = lastPayout()
        if report.isUnknown || report.counter == 0 {
            return completion(InterruptedPayoutPart(paid: nothing, cannotTell: "it was reset and no longer knows its last payout"))
        }
        guard let counter = report.counter else { return completion(InterruptedPayoutPart(paid: report.paid, cannotTell: nil)) }
        guard let before = record.keptCounter else {
            return completion(InterruptedPayoutPart(paid: nothing, cannotTell: "no payout counter of it was kept"))
        }
        completion(InterruptedPayoutPart(paid: counter != before ? report.paid : nothing, cannotTell: nil))
    }
}
