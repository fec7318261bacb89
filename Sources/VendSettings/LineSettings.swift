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

    public init(line: LineReference, activeLow: Bool, bias: Bias, debounce: Duration, origin: ConfigOrigin) {
        self.line = line
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

    public init(line: LineReference, activeLow: Bool, origin: ConfigOrigin) {
        self.line = line
        self.activeLow = activeLow
        self.origin = origin
    }
}

/// One GPIO line as the configuration uses it: what for, and where it was written.
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
    /// For inputs: what must agree when a line is shared (the parser checks it).
    package let inputSettings: String?

    package var isDropSensor: Bool { if case .dropSensor = purpose { true } else { false } }

    /// Every line of `slots` and `buttons`, in their order.
    package static func all(slots: [SlotConfig], buttons: [ButtonConfig]) -> [LineUse] {
        slots.flatMap { slot in
            [
                LineUse(purpose: .slotButton(slot.id), line: slot.button),
                LineUse(purpose: .relay(slot.id), line: slot.relay.line),
            ]
                + (slot.dropSensor.map { [LineUse(purpose: .dropSensor(slot.id), line: $0.input)] } ?? [])
        } + buttons.map { LineUse(purpose: .action($0.action), line: $0.line) }
    }

    package init(purpose: Purpose, line: InputLineConfig) {
        self.purpose = purpose
        self.line = line.line
        self.origin = line.origin
        inputSettings = "\(line.activeLow) \(line.bias) \(line.debounce)"
    }

    package init(purpose: Purpose, line: OutputLineConfig) {
        self.purpose = purpose
        self.line = line.line
        self.origin = line.origin
        inputSettings = nil
    }
}
