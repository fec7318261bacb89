import VendingCore

public struct RelayConfig: Sendable {
    public let line: OutputLineConfig
    /// How long the relay is energised for one vend.
    public let pulse: Duration
    /// A hard limit, enforced apart from the pulse logic: the relay is cut after this long whatever happens.
    public let maximumOn: Duration

    public init(line: OutputLineConfig, pulse: Duration, maximumOn: Duration) {
        self.line = line
        self.pulse = pulse
        self.maximumOn = maximumOn
    }
}

public struct DropSensorConfig: Sendable {
    public let input: InputLineConfig
    /// How long after the relay pulse starts a drop still counts.
    public let window: Duration

    public init(input: InputLineConfig, window: Duration) {
        self.input = input
        self.window = window
    }
}

public struct SlotConfig: Sendable {
    public let setup: SlotSetup
    public var id: SlotID { setup.id }
    public let button: InputLineConfig
    public let drive: SlotDrive
    public let dropSensor: DropSensorConfig?
    /// The temperature zone the slot sits in; its items are protected by the zone's health lock
    /// when they are perishable (`setup.healthZone`).
    public let zone: ZoneID?

    public init(setup: SlotSetup, zone: ZoneID? = nil, button: InputLineConfig, drive: SlotDrive, dropSensor: DropSensorConfig?) {
        self.setup = setup
        self.zone = zone
        self.button = button
        self.drive = drive
        self.dropSensor = dropSensor
    }

    /// The relay of a relay-driven slot.
    public var relay: RelayConfig? {
        if case .relay(let relay) = drive { relay } else { nil }
    }

    /// The spiral motor of a motor-driven slot.
    public var spiral: SpiralConfig? {
        if case .spiral(let spiral) = drive { spiral } else { nil }
    }

    /// The longest the drive may run for one vend: the relay's maximum on-time, the spiral's turn limit.
    public var longestDrive: Duration {
        switch drive {
        case .relay(let relay): relay.maximumOn
        case .spiral(let spiral): spiral.timing.turnLimit
        }
    }
}

public enum ButtonAction: String, Sendable, CaseIterable {
    case coinReturn = "coin-return"
    case serviceMode = "service-mode"
    /// The door switch: an open door puts the machine in service mode.
    case door
    /// The age verifier's input (`age_verification:`, never in `buttons:`): the customer's age is confirmed.
    case ageVerified = "age-verified"

    /// What `buttons:` may name: the age verifier is configured under `age_verification:`.
    public static let allCases: [ButtonAction] = [.coinReturn, .serviceMode, .door]
}

public struct ButtonConfig: Sendable {
    public let action: ButtonAction
    public let line: InputLineConfig

    public init(action: ButtonAction, line: InputLineConfig) {
        self.action = action
        self.line = line
    }
}
