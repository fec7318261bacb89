import VendingCore

/// How one device's part of a payout ended, read back from the device.
public struct PayoutDeviceResult: Sendable, Hashable {
    /// What left the machine.
    public let paid: Money
    /// What may or may not have left it (the device lost track, e.g. it was reset mid-payout).
    public let unknown: Money
    /// The device's payout counter after this payout, if it keeps one (ccTalk hopper event
    /// counter); recorded durably with the payout's end.
    public let counter: UInt64?

    public init(paid: Money, unknown: Money, counter: UInt64?) {
        self.paid = paid
        self.unknown = unknown
        self.counter = counter
    }
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
    /// Pays as much of `amount` as it can in its coins (never more). `completion` is called
    /// exactly once, with what was really paid, from the device's own thread or timer — never
    /// from within this call.
    func pay(_ amount: Money, completion: @escaping @Sendable (PayoutDeviceResult) -> Void)
    /// Reads, without paying, what the device reports about its last payout.
    func lastPayout() -> LastPayoutReport
    /// Stops any payout at once (shutdown, fault); the payout's completion still reports what
    /// was paid up to then.
    func emergencyStop()
}
