import VendingCore

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

public struct InputLineConfig: Sendable {
    public let line: LineReference
    public let activeLow: Bool
    public let bias: Bias
    public let debounce: Duration
    public let origin: ConfigOrigin
    /// The chip the line is on (name, path or label); nil: the top-level `gpio.chip`.
    public let chip: String?

    public init(
        line: LineReference, activeLow: Bool, bias: Bias, debounce: Duration, origin: ConfigOrigin, chip: String? = nil
    ) {
        self.line = line
        self.chip = chip
        self.activeLow = activeLow
        self.bias = bias
        self.debounce = debounce
        self.origin = origin
    }
}

public struct OutputLineConfig: Sendable {
    public let line: LineReference
    public let activeLow: Bool
    public let origin: ConfigOrigin
    /// The chip the line is on (name, path or label); nil: the top-level `gpio.chip`.
    public let chip: String?

    public init(line: LineReference, activeLow: Bool, origin: ConfigOrigin, chip: String? = nil) {
        self.line = line
        self.chip = chip
        self.activeLow = activeLow
        self.origin = origin
    }
}

/// One GPIO line as the configuration uses it: what for, and where it was written.
public struct LineUse: Sendable {
    public enum Purpose: Hashable, Sendable, CustomStringConvertible {
        case slotButton(SlotID), relay(SlotID), dropSensor(SlotID), action(ButtonAction)
        case motor(SlotID), home(SlotID), sharedHome, matrixRow(Int), matrixColumn(Int)
        case zoneRelay(ZoneID), defrostHeater(ZoneID)

        public var description: String {
            switch self {
            case .slotButton(let slot): "button of slot \(slot)"
            case .relay(let slot): "relay of slot \(slot)"
            case .dropSensor(let slot): "drop sensor of slot \(slot)"
            case .action(let action): "\(action.rawValue) button"
            case .motor(let slot): "motor of slot \(slot)"
            case .home(let slot): "home switch of slot \(slot)"
            case .sharedHome: "shared motor home switch"
            case .matrixRow(let row): "motor matrix row \(row + 1)"
            case .matrixColumn(let column): "motor matrix column \(column + 1)"
            case .zoneRelay(let zone): "relay of zone \(zone)"
            case .defrostHeater(let zone): "defrost heater of zone \(zone)"
            }
        }
    }

    public let purpose: Purpose
    public let line: LineReference
    /// Nil: the top-level `gpio.chip`.
    public let chip: String?
    public let origin: ConfigOrigin
    /// For inputs: what must agree when a line is shared (the parser checks it).
    package let inputSettings: String?

    /// Lines every slot may share: a drop sensor across the chute, a matrix's home switch (only
    /// one vend, one motor, is ever in flight, so either is unambiguous).
    package var isShareable: Bool {
        switch purpose {
        case .dropSensor, .home: true
        default: false
        }
    }

    /// Every line of `slots`, `buttons` and the motor matrix, in their order.
    package static func all(slots: [SlotConfig], buttons: [ButtonConfig], matrix: MotorMatrixConfig?) -> [LineUse] {
        // Built in steps: Debian's Swift 6.0 cannot type-check it as one expression in time.
        var uses: [LineUse] = []
        for slot in slots {
            uses.append(LineUse(purpose: .slotButton(slot.id), line: slot.button))
            switch slot.drive {
            case .relay(let relay): uses.append(LineUse(purpose: .relay(slot.id), line: relay.line))
            case .spiral(let spiral):
                if case .line(let motor) = spiral.power { uses.append(LineUse(purpose: .motor(slot.id), line: motor)) }
                uses.append(LineUse(purpose: .home(slot.id), line: spiral.home))
            }
            if let dropSensor = slot.dropSensor { uses.append(LineUse(purpose: .dropSensor(slot.id), line: dropSensor.input)) }
        }
        uses += buttons.map { LineUse(purpose: .action($0.action), line: $0.line) }
        for (index, row) in (matrix?.rows ?? []).enumerated() { uses.append(LineUse(purpose: .matrixRow(index), line: row)) }
        for (index, column) in (matrix?.columns ?? []).enumerated() { uses.append(LineUse(purpose: .matrixColumn(index), line: column)) }
        return uses
    }

    package init(purpose: Purpose, line: InputLineConfig) {
        self.purpose = purpose
        self.line = line.line
        chip = line.chip
        self.origin = line.origin
        inputSettings = "\(line.activeLow) \(line.bias) \(line.debounce)"
    }

    package init(purpose: Purpose, line: OutputLineConfig) {
        self.purpose = purpose
        self.line = line.line
        chip = line.chip
        self.origin = line.origin
        inputSettings = nil
    }
}
