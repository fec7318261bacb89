import VendSettings
import VendingCore

/// A coin the acceptor took in.
public struct AcceptedCoin: Sendable, Equatable {
    public let channel: Int
    public let value: Money
    public let event: CoinEventID
    /// Where it went: only an MDB changer routes coins to its tubes.
    public let route: CoinRoute

    public init(channel: Int, value: Money, event: CoinEventID, route: CoinRoute = .cashBox) {
        self.channel = channel
        self.value = value
        self.event = event
        self.route = route
    }
}

public enum CoinAcceptorEvent: Sendable, Equatable {
    case accepted(AcceptedCoin)
    /// A bill went into the stacker (credited now; an escrowed bill is not credited).
    case billStacked(value: Money, event: CoinEventID)
    /// Coins paid out by a device's own buttons (an MDB changer's manual dispense).
    case dispensedManually(Money)
    /// The device's event counter stands at `event` with nothing to credit (first contact with a
    /// device, or after its reset): recorded durably so a restart resumes after it.
    case synchronised(CoinEventID)
    /// Something a technician should read: device identity, faults, reconnects, rejected coins.
    case notice(String, isFault: Bool)
    /// A notice whose text starts with the device it is about ("coin changer: tube jam"): one of
    /// several devices behind this acceptor (the MDB bus).
    case deviceNotice(String, isFault: Bool)
}

/// A coin acceptor behind any protocol (ccTalk, one byte per coin, simulation).
public protocol CoinAcceptor: Sendable {
    /// Starts talking to the device. `lastSequence` gives, per event source, the last coin event
    /// already credited, so nothing buffered in the device is credited twice or lost. Its events
    /// go to `report` (`.cash`, and a card reader's on the same bus `.card`) on the driver's own
    /// thread (or the caller's, in simulation), one at a time, in the order they happened.
    func start(lastSequence: @escaping @Sendable (String) -> UInt64?, report: @escaping DeviceReportHandler)
    /// Enable (true) or inhibit (false) acceptance of every configured channel. Takes effect in
    /// call order: the device ends in the state of the last call.
    func setAcceptance(_ enabled: Bool)
    /// The largest bill to stack from escrow from now on (nil: return every bill), as the machine
    /// last said (`Effect.setBillLimit`); the device decides each bill from it without asking.
    /// In call order, like `setAcceptance`.
    func setBillLimit(_ limit: Money?)
    /// Inhibits the device and stops talking to it.
    func stop() async
}

extension CoinAcceptor {
    /// A device that takes no bills has no escrow to decide.
    public func setBillLimit(_ limit: Money?) {}
}
