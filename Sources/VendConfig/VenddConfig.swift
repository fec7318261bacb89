import VendingCore

/// The technician's file, validated: everything physical about the machine. Built only when the
/// file has no errors.
public struct VenddConfig: Sendable {
    public let file: String
    public let machine: MachineSettings
    public let gpio: GPIOSettings
    public let products: [Product]
    public let slots: [SlotConfig]
    public let buttons: [ButtonConfig]
    public let coinAcceptor: CoinAcceptorConfig?
    public let stateDirectory: String
    public let control: ControlSettings
    public let display: DisplaySettings
    /// Pictures and LCD names by product id; a product without either is absent.
    public let productFaces: [String: ProductFace]

    /// What the core needs of all this.
    public let machineSetup: MachineSetup

    /// Every GPIO line the configuration uses, in file order.
    public var lines: [LineUse] { LineUse.all(slots: slots, buttons: buttons) }
}

public struct MachineSettings: Sendable {
    public let name: String
    public let currency: Currency
    public let moneyFormat: MoneyFormat
    public let maximumCredit: Money
    public let vendTimeout: Duration
    public let unknownOutcomePolicy: UnknownOutcomePolicy
    public let failedVendPolicy: FailedVendPolicy
    public let payout: PayoutMode
    public let historyLimit: Int
}

/// How money goes back to a customer.
public enum PayoutMode: String, Sendable, CaseIterable {
    /// The machine cannot hand money back: credit stays until spent.
    case none
    /// An attendant pays refunds by hand; each one is logged for them.
    case manual
}

public struct GPIOSettings: Sendable {
    /// A chip by name (`gpiochip0`), path (`/dev/gpiochip0`) or label (`pinctrl-bcm2711`).
    public let chip: String
    /// How long an input must stay stable before a change counts.
    public let debounce: Duration
}

/// A GPIO line by offset on the chip, or by the name the board gives it (`GPIO17`).
public enum LineReference: Hashable, Sendable, CustomStringConvertible {
    case offset(Int)
    case name(String)

    public var description: String {
        switch self {
        case .offset(let offset): "\(offset)"
        case .name(let name): name
        }
    }
}

public enum Bias: String, Sendable, CaseIterable {
    case asIs = "as-is"
    case disabled
    case pullUp = "pull-up"
    case pullDown = "pull-down"
}

/// Where a value came from, so that a driver can name the key behind a hardware error.
public struct ConfigOrigin: Hashable, Sendable, CustomStringConvertible {
    public let location: SourceLocation
    public let path: String
    public var description: String { "\(path) (\(location))" }
}

public struct InputLineConfig: Sendable {
    public let line: LineReference
    public let activeLow: Bool
    public let bias: Bias
    public let debounce: Duration
    public let origin: ConfigOrigin
}

public struct OutputLineConfig: Sendable {
    public let line: LineReference
    public let activeLow: Bool
    public let origin: ConfigOrigin
}

public struct RelayConfig: Sendable {
    public let line: OutputLineConfig
    /// How long the relay is energised for one vend.
    public let pulse: Duration
    /// A hard limit, enforced apart from the pulse logic: the relay is cut after this long whatever happens.
    public let maximumOn: Duration
}

public struct DropSensorConfig: Sendable {
    public let input: InputLineConfig
    /// How long after the relay pulse starts a drop still counts.
    public let window: Duration
}

public struct SlotConfig: Sendable {
    public let setup: SlotSetup
    public var id: SlotID { setup.id }
    public let button: InputLineConfig
    public let relay: RelayConfig
    public let dropSensor: DropSensorConfig?
}

public enum ButtonAction: String, Sendable, CaseIterable {
    case coinReturn = "coin-return"
    case serviceMode = "service-mode"
    /// The door switch: an open door puts the machine in service mode.
    case door
}

public struct ButtonConfig: Sendable {
    public let action: ButtonAction
    public let line: InputLineConfig
}

public struct LineUse: Sendable {
    public enum Purpose: Hashable, Sendable, CustomStringConvertible {
        case slotButton(SlotID), relay(SlotID), dropSensor(SlotID), action(ButtonAction)

        public var description: String {
            switch self {
            case .slotButton(let slot): "button of slot \(slot)"
            case .relay(let slot): "relay of slot \(slot)"
            case .dropSensor(let slot): "drop sensor of slot \(slot)"
            case .action(let action): "\(action.rawValue) button"
            }
        }
    }

    public let purpose: Purpose
    public let line: LineReference
    public let origin: ConfigOrigin
    /// For inputs: what must agree when a line is shared.
    let inputSettings: String?

    var isDropSensor: Bool { if case .dropSensor = purpose { true } else { false } }

    static func all(slots: [SlotConfig], buttons: [ButtonConfig]) -> [LineUse] {
        slots.flatMap { slot in
            [LineUse(purpose: .slotButton(slot.id), line: slot.button),
             LineUse(purpose: .relay(slot.id), line: slot.relay.line)]
                + (slot.dropSensor.map { [LineUse(purpose: .dropSensor(slot.id), line: $0.input)] } ?? [])
        } + buttons.map { LineUse(purpose: .action($0.action), line: $0.line) }
    }

    init(purpose: Purpose, line: InputLineConfig) {
        self.purpose = purpose
        self.line = line.line
        self.origin = line.origin
        inputSettings = "\(line.activeLow) \(line.bias) \(line.debounce)"
    }

    init(purpose: Purpose, line: OutputLineConfig) {
        self.purpose = purpose
        self.line = line.line
        self.origin = line.origin
        inputSettings = nil
    }
}

public enum CoinProtocol: String, Sendable, CaseIterable {
    case cctalk
    /// Each received byte is a channel number (cheap acceptors with a serial output).
    case bytecode
}

public enum CcTalkChecksum: String, Sendable, CaseIterable {
    case simple8 = "simple-8"
    case crc16 = "crc-16"
}

public struct CcTalkSettings: Sendable {
    public let address: Int
    public let hostAddress: Int
    public let checksum: CcTalkChecksum
    /// The interface returns our own bytes (single-wire or RS-485 buses do).
    public let echo: Bool
    public let pollInterval: Duration
}

public struct CoinChannel: Sendable {
    public let channel: Int
    public let value: Money
    public let enabled: Bool
    public let origin: ConfigOrigin
}

public struct CoinAcceptorConfig: Sendable {
    /// A device path (`/dev/ttyUSB0`, `/dev/serial/by-id/…`) or `unix:/path/to/socket`.
    public let port: String
    public let baudRate: Int
    public let `protocol`: CoinProtocol
    /// Present exactly when the protocol is ccTalk.
    public let cctalk: CcTalkSettings?
    public let channels: [CoinChannel]

    public func channel(_ number: Int) -> CoinChannel? { channels.first { $0.channel == number } }
}

public struct ControlSettings: Sendable {
    public let socketPath: String
    /// Members of this group (and root) may change the machine through the socket.
    public let group: String
    /// Members of this group may send what a customer can do at the machine (select a slot,
    /// press coin return), and restock while the service key is on: the display runs in it.
    public let customerGroup: String
}
