import VendSettings
import VendingCore

/// The technician's file, validated: everything physical about the machine. Built only when the
/// file has no errors.
public struct VenddConfig: Sendable {
    public let file: String
    public let machine: MachineSettings
    public let gpio: GPIOSettings
    public let products: [Product]
    public let slots: [SlotConfig]
    /// The row and column lines of the spiral motors' matrix; nil without `motors.rows`.
    public let motorMatrix: MotorMatrixConfig?
    public let buttons: [ButtonConfig]
    public let coinAcceptor: CoinAcceptorConfig?
    /// Hoppers (in file order) that pay change and refunds with payout policy `change`.
    public let payoutDevices: [PayoutDeviceConfig]
    /// The MDB bus (coin changer, bill validator) behind a master interface.
    public let mdb: MDBSettings?
    public let stateDirectory: String
    public let control: ControlSettings
    public let display: DisplaySettings
    /// Pictures and LCD names by product id; a product without either is absent.
    public let productFaces: [String: ProductFace]

    /// What the core needs of all this.
    public let machineSetup: MachineSetup
    /// The fleet link; nil without an `mqtt:` section.
    public var mqtt: MQTTSettings? = nil
    /// The DEX port; nil without a `dex:` section.
    public var dex: DEXSettings? = nil
    /// Temperature zones, in file order; empty without a `zones:` section.
    public var zones: [ZoneConfig] = []
    /// The age verifier; nil without an `age_verification:` section (restricted slots sell nothing).
    public var ageVerification: AgeVerificationSettings? = nil
    /// What is valid but likely a mistake (a restricted slot without a verifier), with its place.
    public var warnings: [ConfigDiagnostic] = []

    /// Every GPIO line the configuration uses, in file order (the zones' relays last).
    public var lines: [LineUse] { LineUse.all(slots: slots, buttons: buttons, matrix: motorMatrix) + zoneLines }

    /// The zones' compressor, heater and defrost heater relays.
    public var zoneLines: [LineUse] {
        var uses: [LineUse] = []
        for zone in zones {
            if let relay = zone.relay { uses.append(LineUse(purpose: .zoneRelay(zone.settings.id), line: relay)) }
            if let heater = zone.defrostHeater { uses.append(LineUse(purpose: .defrostHeater(zone.settings.id), line: heater)) }
        }
        return uses
    }
}

public struct MachineSettings: Sendable {
    public let name: String
    public let currency: Currency
    public let moneyFormat: MoneyFormat
    public let maximumCredit: Money
    public let vendTimeout: Duration
    public let unknownOutcomePolicy: UnknownOutcomePolicy
    public let failedVendPolicy: FailedVendPolicy
    public let payout: PayoutPolicy
    public let historyLimit: Int
    /// How `vendctl status` and `vendctl temps` show temperatures; the file's are always °C.
    public var temperatureUnit: TemperatureUnit = .celsius
}

public struct GPIOSettings: Sendable {
    /// A chip by name (`gpiochip0`), path (`/dev/gpiochip0`) or label (`pinctrl-bcm2711`).
    public let chip: String
    /// Where the file names the chip, for the error when it is not there.
    public let chipOrigin: ConfigOrigin?
    /// How long an input must stay stable before a change counts.
    public let debounce: Duration
}

public struct ControlSettings: Sendable {
    public let socketPath: String
    /// Members of this group (and root) may change the machine through the socket.
    public let group: String
    /// Members of this group may send what a customer can do at the machine (select a slot,
    /// press coin return), and restock while the service key is on: the display runs in it.
    public let customerGroup: String
    /// Where the file names `group` and `customer_group` (absent: the default).
    var groupLocations: [String: SourceLocation] = [:]
}

extension VenddConfig {
    /// The card readers `mdb.cashless` configures, in the file's order.
    public var cardReaders: [CardReader] { (mdb?.cashless ?? []).map(\.reader) }
}
