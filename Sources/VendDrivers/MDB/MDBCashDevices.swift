import VendHardware
import VendSerial
import VendSettings
import VendTime
import VendingCore

/// The MDB bus seen as the daemon's coin acceptor: coins, bills and the card readers' reports
/// come in through the same route as the ccTalk acceptor's coins (`DeviceReport`), and
/// acceptance follows the machine the same way.
/// The escrow is decided from the bill limit the machine last set; until it sets one, escrowed
/// bills are returned.
public final class MDBCashDevices: CoinAcceptor {
    public let bus: MDBBus
    private let settings: MDBSettings

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

    public func start(lastSequence: @escaping @Sendable (String) -> UInt64?, report: @escaping DeviceReportHandler) {
        bus.start(
            lastSequence: lastSequence,
            deliver: { event in
                switch event {
                case .coinDeposited(let coin): report(.cash(.accepted(coin)))
                case .billStacked(let value, let id): report(.cash(.billStacked(value: value, event: id)))
                case .notice(let text, let isFault): report(.cash(.deviceNotice(text, isFault: isFault)))
                case .dispensedManually(let amount): report(.cash(.dispensedManually(amount)))
                case .card(let input): report(.card(input))
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

    public func start(lastSequence: @escaping @Sendable (String) -> UInt64?, report: @escaping DeviceReportHandler) {
        for member in members { member.start(lastSequence: lastSequence, report: report) }
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
