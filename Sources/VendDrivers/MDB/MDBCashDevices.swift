import Synchronization
import VendHardware
import VendSerial
import VendSettings
import VendTime
import VendingCore

/// The MDB bus seen as the daemon's coin acceptor: coins and bills come in through the same
/// event path as the ccTalk acceptor's coins, and acceptance follows the machine the same way.
/// The escrow is decided from the bill limit the machine last set; until it sets one, escrowed
/// bills are returned.
public final class MDBCashDevices: CoinAcceptor {
    public let bus: MDBBus
    private let settings: MDBSettings
    private let cardReports = Mutex<(@Sendable (Input) -> Void)?>(nil)

    public init(settings: MDBSettings, timekeeper: any Timekeeper, interface: MDBInterfaceLink? = nil) {
        self.settings = settings
        bus = MDBBus(settings: settings, timekeeper: timekeeper, interface: interface)
    }

    /// The interface and the configured devices, as status and the log show them.
    public var description: String {
        let devices =
            [
                settings.changer.map { "coin changer (\($0.coins.count) types)" },
                settings.billValidator.map { "bill validator (\($0.bills.count) types)" },
            ] + settings.cashless.map { "card reader (\($0.reader))" }
        return "MDB on \(bus.interfaceName): \(devices.compactMap { $0 }.joined(separator: ", "))"
    }

    /// Where the card readers' reports go (the machine's inbox); until set, they are dropped.
    public func routeCardReports(_ handler: @escaping @Sendable (Input) -> Void) {
        cardReports.withLock { $0 = handler }
    }

    public func start(lastSequence: @escaping @Sendable (String) -> UInt64?, deliver: @escaping CoinAcceptorEventHandler) {
        bus.start(
            lastSequence: lastSequence,
            deliver: { event in
                switch event {
                case .coinDeposited(let coin): deliver(.accepted(coin))
                case .billStacked(let value, let id): deliver(.billStacked(value: value, event: id))
                case .notice(let text, let isFault): deliver(.deviceNotice(text, isFault: isFault))
                case .dispensedManually(let amount): deliver(.dispensedManually(amount))
                case .card(let input): self.cardReports.withLock { $0 }?(input)
                case .changeInventory, .stacker: break  // kept by the bus (`MDBChangerPayout`, `vendctl status`)
                }
            })
    }

    public func setAcceptance(_ enabled: Bool) { bus.setAcceptance(enabled) }
    public func setBillLimit(_ limit: Money?) { bus.setBillLimit(limit) }

    public func stop() async { await bus.stop() }
}

/// Several coin sources as one (a ccTalk acceptor for coins beside an MDB bill validator).
public final class CoinAcceptorGroup: CoinAcceptor {
    private let members: [any CoinAcceptor]

    public init(_ members: [any CoinAcceptor]) { self.members = members }

    public func start(lastSequence: @escaping @Sendable (String) -> UInt64?, deliver: @escaping CoinAcceptorEventHandler) {
        for member in members { member.start(lastSequence: lastSequence, deliver: deliver) }
    }

    public func setAcceptance(_ enabled: Bool) {
        for member in members { member.setAcceptance(enabled) }
    }

    public func setBillLimit(_ limit: Money?) {
        for member in members { member.setBillLimit(limit) }
    }

    public func stop() async {
        for member in members { await member.stop() }
    }
}
