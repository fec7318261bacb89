/// The `sim-…` verbs of the control protocol: what `vendctl sim` asks of the simulated devices
/// under `vendd --simulate`, kept apart from the commands a production machine answers. Their
/// cases are `ControlCommand`'s; their fields are decoded and encoded here.
/// What happens at a simulated card reader.
public enum SimulatedCardAction: Sendable, Equatable {
    /// A card presented, with the funds the reader tells (exact decimal text), or none told.
    case tap(funds: String?)
    /// The customer takes the card away (SESSION CANCEL REQUEST).
    case remove
    /// The bank denies the next vend.
    case deny
    /// The next approval comes after this many POLLs (an online authorisation).
    case slow(polls: Int)
    /// The next failed vend's refund fails (MALFUNCTION C0h).
    case refundFail

    public static let names = ["tap", "remove", "deny", "slow", "refund-fail"]

    public var name: String {
        switch self {
        case .tap: "tap"
        case .remove: "remove"
        case .deny: "deny"
        case .slow: "slow"
        case .refundFail: "refund-fail"
        }
    }
}

extension ControlRequest {
    /// The command of a `sim-…` op; nil for any other op.
    static func simulatedCommand(_ op: String, _ container: KeyedDecodingContainer<Key>) throws -> ControlCommand? {
        switch op {
        case "sim-press": return .simPress(slot: try container.decode(String.self, forKey: .slot))
        case "sim-coin": return .simCoin(amount: try container.decode(String.self, forKey: .amount))
        case "sim-note": return .simNote(amount: try container.decode(String.self, forKey: .amount))
        case "sim-card":
            let action = try container.decode(String.self, forKey: .action)
            let decoded: SimulatedCardAction
            switch action {
            case "tap": decoded = .tap(funds: try container.decodeIfPresent(String.self, forKey: .amount))
            case "remove": decoded = .remove
            case "deny": decoded = .deny
            case "slow": decoded = .slow(polls: try container.decode(Int.self, forKey: .count))
            case "refund-fail": decoded = .refundFail
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: .action, in: container,
                    debugDescription: "unknown card action '\(action)' (known: \(SimulatedCardAction.names.joined(separator: ", ")))")
            }
            return .simCard(reader: try container.decode(Int.self, forKey: .reader), action: decoded)
        case "sim-drop":
            return .simDrop(
                slot: try container.decode(String.self, forKey: .slot),
                succeeds: try container.decode(Bool.self, forKey: .succeeds))
        case "sim-motor":
            return .simMotor(
                slot: try container.decode(String.self, forKey: .slot), action: try container.decode(String.self, forKey: .action))
        case "sim-coin-return": return .simCoinReturn
        case "sim-key": return .simKey(on: try container.decode(Bool.self, forKey: .on))
        case "sim-door": return .simDoor(open: try container.decode(Bool.self, forKey: .on))
        case "sim-temp":
            return .simTemp(zone: try container.decode(String.self, forKey: .zone), value: try container.decode(String.self, forKey: .value))
        case "sim-sensor-fault":
            return .simSensorFault(
                zone: try container.decode(String.self, forKey: .zone), fault: try container.decode(String.self, forKey: .fault))
        default: return nil
        }
    }

    /// A `sim-…` command's fields; any other command's are written by `encode(to:)`.
    func encodeSimulated(into container: inout KeyedEncodingContainer<Key>) throws {
        switch command {
        case .simPress(let slot): try container.encode(slot, forKey: .slot)
        case .simKey(let on): try container.encode(on, forKey: .on)
        case .simCoin(let amount), .simNote(let amount): try container.encode(amount, forKey: .amount)
        case .simCard(let reader, let action):
            try container.encode(reader, forKey: .reader)
            try container.encode(action.name, forKey: .action)
            switch action {
            case .tap(let funds): try container.encodeIfPresent(funds, forKey: .amount)
            case .slow(let polls): try container.encode(polls, forKey: .count)
            case .remove, .deny, .refundFail: break
            }
        case .simDrop(let slot, let succeeds):
            try container.encode(slot, forKey: .slot)
            try container.encode(succeeds, forKey: .succeeds)
        case .simMotor(let slot, let action):
            try container.encode(slot, forKey: .slot)
            try container.encode(action, forKey: .action)
        case .simDoor(let open): try container.encode(open, forKey: .on)
        case .simTemp(let zone, let value):
            try container.encode(zone, forKey: .zone)
            try container.encode(value, forKey: .value)
        case .simSensorFault(let zone, let fault):
            try container.encode(zone, forKey: .zone)
            try container.encode(fault, forKey: .fault)
        default: break
        }
    }
}
