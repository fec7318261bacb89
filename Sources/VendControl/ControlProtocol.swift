/// The control socket speaks JSON lines: one request per line, one response per line, in order.
/// `watch` turns the connection into a stream of event lines until the client hangs up.
///
///     → {"v":1,"op":"sim-coin","amount":"500"}
///     ← {"v":1,"ok":true,"message":"coin of 500원 accepted on channel 4"}
///     → {"v":1,"op":"frobnicate"}
///     ← {"v":1,"ok":false,"error":{"code":"bad-request","message":"unknown op 'frobnicate' (known: …)"}}
///
/// `v` is the protocol version; a daemon answers a request of another version with
/// `unsupported-version`, so an old vendctl fails clearly against a newer daemon.
public enum ControlProtocol {
    public static let version = 1
    /// A request line longer than this is refused: nothing legitimate comes close.
    public static let maximumRequestBytes = 65_536
}

/// What a client can ask. Queries are open to anyone who can reach the socket; everything that
/// changes the machine is checked against the peer's credentials.
public enum ControlCommand: Sendable, Equatable {
    case status
    case watch
    case simPress(slot: String)
    case simCoin(amount: String)
    case simDrop(slot: String, succeeds: Bool)
    case simCoinReturn
    /// Fill a slot (or every slot, with "all") to capacity, or add `count` items.
    case restock(slot: String, count: Int?)

    public var op: String {
        switch self {
        case .status: "status"
        case .watch: "watch"
        case .simPress: "sim-press"
        case .simCoin: "sim-coin"
        case .simDrop: "sim-drop"
        case .simCoinReturn: "sim-coin-return"
        case .restock: "restock"
        }
    }

    public static let knownOps = ["status", "watch", "restock", "sim-press", "sim-coin", "sim-drop", "sim-coin-return"]

    /// Whether the command changes the machine (and so needs the technician group).
    public var isMutating: Bool {
        switch self {
        case .status, .watch: false
        case .simPress, .simCoin, .simDrop, .simCoinReturn, .restock: true
        }
    }
}

public struct ControlRequest: Sendable, Equatable {
    public let version: Int
    public let command: ControlCommand

    public init(_ command: ControlCommand, version: Int = ControlProtocol.version) {
        self.version = version
        self.command = command
    }
}

extension ControlRequest: Codable {
    private enum Key: String, CodingKey { case v, op, slot, amount, succeeds, count }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        version = try container.decode(Int.self, forKey: .v)
        let op = try container.decode(String.self, forKey: .op)
        switch op {
        case "status": command = .status
        case "watch": command = .watch
        case "sim-press": command = .simPress(slot: try container.decode(String.self, forKey: .slot))
        case "sim-coin": command = .simCoin(amount: try container.decode(String.self, forKey: .amount))
        case "sim-drop":
            command = .simDrop(slot: try container.decode(String.self, forKey: .slot),
                               succeeds: try container.decode(Bool.self, forKey: .succeeds))
        case "sim-coin-return": command = .simCoinReturn
        case "restock":
            command = .restock(slot: try container.decode(String.self, forKey: .slot),
                               count: try container.decodeIfPresent(Int.self, forKey: .count))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .op, in: container,
                debugDescription: "unknown op '\(op)' (known: \(ControlCommand.knownOps.joined(separator: ", ")))")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(version, forKey: .v)
        try container.encode(command.op, forKey: .op)
        switch command {
        case .status, .watch, .simCoinReturn: break
        case .simPress(let slot): try container.encode(slot, forKey: .slot)
        case .simCoin(let amount): try container.encode(amount, forKey: .amount)
        case .simDrop(let slot, let succeeds):
            try container.encode(slot, forKey: .slot)
            try container.encode(succeeds, forKey: .succeeds)
        case .restock(let slot, let count):
            try container.encode(slot, forKey: .slot)
            try container.encodeIfPresent(count, forKey: .count)
        }
    }
}

public struct ControlError: Error, Codable, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Codable, Sendable {
        case badRequest = "bad-request"
        case unsupportedVersion = "unsupported-version"
        case forbidden
        case rejected
        case notSimulated = "not-simulated"
        case `internal`
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// One response line. `status` is set for the status command; `message` says what a command did.
public struct ControlResponse: Codable, Sendable, Equatable {
    public let v: Int
    public let ok: Bool
    public let message: String?
    public let status: StatusReport?
    public let error: ControlError?

    public static func success(_ message: String? = nil, status: StatusReport? = nil) -> ControlResponse {
        ControlResponse(v: ControlProtocol.version, ok: true, message: message, status: status, error: nil)
    }

    public static func failure(_ error: ControlError) -> ControlResponse {
        ControlResponse(v: ControlProtocol.version, ok: false, message: nil, status: nil, error: error)
    }
}

/// The machine as `vendctl status` shows it. Amounts come both as exact decimal text and
/// formatted with the machine's currency pattern.
public struct StatusReport: Codable, Sendable, Equatable {
    public struct Slot: Codable, Sendable, Equatable {
        public let id: String
        public let product: String
        public let productName: String
        public let price: String
        public let priceText: String
        public let available: Int
        public let stock: Int
        public let capacity: Int
        /// Milliseconds since the Unix epoch.
        public let earliestExpiry: Int64?

        public init(id: String, product: String, productName: String, price: String, priceText: String,
                    available: Int, stock: Int, capacity: Int, earliestExpiry: Int64?) {
            self.id = id
            self.product = product
            self.productName = productName
            self.price = price
            self.priceText = priceText
            self.available = available
            self.stock = stock
            self.capacity = capacity
            self.earliestExpiry = earliestExpiry
        }
    }

    /// The books since the machine was new, as exact decimal amounts.
    public struct Books: Codable, Sendable, Equatable {
        public let coinsIn: String
        public let sales: String
        public let refunds: String
        public let itemsSold: Int
        public let failedVends: Int
        public let unknownOutcomes: Int

        public init(coinsIn: String, sales: String, refunds: String, itemsSold: Int, failedVends: Int, unknownOutcomes: Int) {
            self.coinsIn = coinsIn
            self.sales = sales
            self.refunds = refunds
            self.itemsSold = itemsSold
            self.failedVends = failedVends
            self.unknownOutcomes = unknownOutcomes
        }
    }

    public let machine: String
    /// "in-service", "service-mode" or "out-of-order".
    public let state: String
    public let stateReason: String?
    public let currency: String
    public let credit: String
    public let creditText: String
    public let acceptingCoins: Bool
    public let vendInProgress: String?
    public let simulated: Bool
    public let coinAcceptor: String
    public let gpio: String
    public let slots: [Slot]
    public let books: Books

    public init(machine: String, state: String, stateReason: String?, currency: String, credit: String, creditText: String,
                acceptingCoins: Bool, vendInProgress: String?, simulated: Bool, coinAcceptor: String, gpio: String, slots: [Slot],
                books: Books) {
        self.machine = machine
        self.state = state
        self.stateReason = stateReason
        self.currency = currency
        self.credit = credit
        self.creditText = creditText
        self.acceptingCoins = acceptingCoins
        self.vendInProgress = vendInProgress
        self.simulated = simulated
        self.coinAcceptor = coinAcceptor
        self.gpio = gpio
        self.slots = slots
        self.books = books
    }
}

/// One line of `watch`: when, what (readable), and the event itself.
public struct EventLine: Codable, Sendable, Equatable {
    public let v: Int
    /// Milliseconds since the Unix epoch.
    public let at: Int64
    public let kind: String
    public let text: String

    public init(at: Int64, kind: String, text: String) {
        v = ControlProtocol.version
        self.at = at
        self.kind = kind
        self.text = text
    }
}
