/// The `sim-…` verbs of the control protocol: what `vendctl sim` does to the simulated devices of
/// `vendd --simulate` (a production vendd answers them `not-simulated`), kept apart from the
/// commands a production machine answers. `ControlCommand.sim` carries them; on the wire they are
/// ops of their own (`{"v":1,"op":"sim-coin","amount":"500"}`).
public enum SimCommand: Sendable, Equatable {
    /// The button of a slot.
    case press(slot: String)
    /// A coin into the simulated coin acceptor, or the simulated MDB changer.
    case coin(amount: String)
    /// A note into the simulated MDB bill validator.
    case note(amount: String)
    /// A customer (or the bank) at a simulated MDB card reader, 1 or 2.
    case card(reader: Int, action: SimulatedCardAction)
    /// Whether the next vend from a slot drops its item.
    case drop(slot: String, succeeds: Bool)
    /// The next turn of a simulated spiral motor jams or finds no motor; `free` puts its cam home.
    case motor(slot: String, action: String)
    /// The coin return button.
    case coinReturn
    /// The age verifier's input (`age_verification:` with `verifier: gpio`).
    case verifyAge
    /// Turns the simulated service key switch on or off (it stays where it is put).
    case key(on: Bool)
    /// The simulated door switch: service mode while open, and every zone sees it.
    case door(open: Bool)
    /// The simulated cabinet of a zone is at this temperature (degrees Celsius, e.g. "7.5").
    case temp(zone: String, value: String)
    /// A zone's simulated sensors fail ("missing", "crc", "85") or read again ("clear").
    case sensorFault(zone: String, fault: String)

    public var op: String {
        switch self {
        case .press: "sim-press"
        case .coin: "sim-coin"
        case .note: "sim-note"
        case .card: "sim-card"
        case .drop: "sim-drop"
        case .motor: "sim-motor"
        case .coinReturn: "sim-coin-return"
        case .verifyAge: "sim-verify-age"
        case .key: "sim-key"
        case .door: "sim-door"
        case .temp: "sim-temp"
        case .sensorFault: "sim-sensor-fault"
        }
    }

    public static let knownOps = [
        "sim-press", "sim-coin", "sim-note", "sim-card", "sim-drop", "sim-motor", "sim-coin-return", "sim-key", "sim-door", "sim-temp",
        "sim-sensor-fault", "sim-verify-age",
    ]

    /// The command of a `sim-…` op, from the request's fields; nil for any other op.
    init?(op: String, _ container: KeyedDecodingContainer<ControlRequest.Key>) throws {
        switch op {
        case "sim-press": self = .press(slot: try container.decode(String.self, forKey: .slot))
        case "sim-coin": self = .coin(amount: try container.decode(String.self, forKey: .amount))
        case "sim-note": self = .note(amount: try container.decode(String.self, forKey: .amount))
        case "sim-card":
            let action = try container.decode(String.self, forKey: .action)
            let decoded: SimulatedCardAction
            switch action {
            case "tap": decoded = .tap(funds: try container.decodeIfPresent(String.self, forKey: .amount))
            case "remove": decoded = .remove
            case "deny": decoded = .deny
            case "slow": decoded = .slow(polls: try container.decode(Int.self, forKey: .count))
            case "refund-fail": decoded = .refundFail
            case "id": decoded = .showID(age: try container.decodeIfPresent(Int.self, forKey: .count))
            case "back": decoded = .back
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: .action, in: container,
                    debugDescription: "unknown card action '\(action)' (known: \(SimulatedCardAction.names.joined(separator: ", ")))")
            }
            self = .card(reader: try container.decode(Int.self, forKey: .reader), action: decoded)
        case "sim-drop":
            self = .drop(slot: try container.decode(String.self, forKey: .slot), succeeds: try container.decode(Bool.self, forKey: .succeeds))
        case "sim-motor":
            self = .motor(slot: try container.decode(String.self, forKey: .slot), action: try container.decode(String.self, forKey: .action))
        case "sim-coin-return": self = .coinReturn
        case "sim-verify-age": self = .verifyAge
        case "sim-key": self = .key(on: try container.decode(Bool.self, forKey: .on))
        case "sim-door": self = .door(open: try container.decode(Bool.self, forKey: .on))
        case "sim-temp":
            self = .temp(zone: try container.decode(String.self, forKey: .zone), value: try container.decode(String.self, forKey: .value))
        case "sim-sensor-fault":
            self = .sensorFault(zone: try container.decode(String.self, forKey: .zone), fault: try container.decode(String.self, forKey: .fault))
        default: return nil
        }
    }

    /// The command's fields beside its `op`.
    func encodeFields(into container: inout KeyedEncodingContainer<ControlRequest.Key>) throws {
        switch self {
        case .press(let slot): try container.encode(slot, forKey: .slot)
        case .key(let on): try container.encode(on, forKey: .on)
        case .coin(let amount), .note(let amount): try container.encode(amount, forKey: .amount)
        case .card(let reader, let action):
            try container.encode(reader, forKey: .reader)
            try container.encode(action.name, forKey: .action)
            switch action {
            case .tap(let funds): try container.encodeIfPresent(funds, forKey: .amount)
            case .slow(let polls): try container.encode(polls, forKey: .count)
            case .showID(let age): try container.encodeIfPresent(age, forKey: .count)
            case .remove, .deny, .refundFail, .back: break
            }
        case .drop(let slot, let succeeds):
            try container.encode(slot, forKey: .slot)
            try container.encode(succeeds, forKey: .succeeds)
        case .motor(let slot, let action):
            try container.encode(slot, forKey: .slot)
            try container.encode(action, forKey: .action)
        case .coinReturn, .verifyAge: break
        case .door(let open): try container.encode(open, forKey: .on)
        case .temp(let zone, let value):
            try container.encode(zone, forKey: .zone)
            try container.encode(value, forKey: .value)
        case .sensorFault(let zone, let fault):
            try container.encode(zone, forKey: .zone)
            try container.encode(fault, forKey: .fault)
        }
    }
}

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
    /// The customer shows an ID at the reader's age prompt: showing `age`, or none readable (nil).
    case showID(age: Int?)
    /// The customer gives up at the reader's age prompt (its back button).
    case back

    public static let names = ["tap", "remove", "deny", "slow", "refund-fail", "id", "back"]

    public var name: String {
        switch self {
        case .tap: "tap"
        case .remove: "remove"
        case .deny: "deny"
        case .slow: "slow"
        case .refundFail: "refund-fail"
        case .showID: "id"
        case .back: "back"
        }
    }
}
