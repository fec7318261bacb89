import VendingCore

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
/// changes the machine is checked against the peer's credentials. Instants are milliseconds since
/// the Unix epoch; amounts are exact decimal text in the machine's currency.
public enum ControlCommand: Sendable, Equatable {
    case status
    case watch
    /// What `vendctl sim` does to the simulated devices of `vendd --simulate` (`SimCommand`).
    case sim(SimCommand)
    /// A technician puts a slot locked by a motor fault back in service.
    case slotClear(slot: String)
    /// A customer selects a slot: the same input as its button. Refused with the reason.
    case select(slot: String)
    /// A customer presses coin return: the same input as the button.
    case coinReturn
    /// Fill a slot (or every slot, with "all") to capacity, or add `count` items, loaded at
    /// `loadedAt` (default: now), which starts their shelf life.
    case restock(slot: String, count: Int?, loadedAt: Int64? = nil)
    /// Take `count` items (default: all) out of a slot, oldest first; those past their shelf
    /// life are booked as discarded, and a slot stopped by them sells again.
    case unload(slot: String, count: Int?)
    /// Available items per product.
    case stock
    /// What the current credit buys.
    case purchasable
    /// Items past their shelf life at `at` (default: now).
    case expired(at: Int64?)
    case hot
    /// The category tree with every product.
    case products
    /// A slot's price; `amount` "default" goes back to the configured price.
    case price(slot: String, amount: String)
    /// A slot's price on `list` for the payments `payment` names (not list 1 for every payment,
    /// which is `price`); "default" goes back to the file's line. Sent as op `price` with
    /// `list` and `payment`.
    case priceLine(slot: String, amount: String, list: Int, payment: PriceScope)
    /// Every slot's prices by list and payment, the lists and the time bands.
    case prices
    case service(on: Bool)
    /// Sales at or after `since`, the most recent `limit` of them.
    case history(since: Int64?, limit: Int?)
    case coins
    /// Sales per product and per slot: since the machine was new, or at or after `since`.
    case sales(since: Int64?)
    /// Fill mode on or off (service mode): coins put in are float for the change stock.
    case fill(on: Bool)
    /// The payout devices pay `amount` from their stock (service mode); not from any credit.
    /// `confirmed` (`--yes`): the technician accepts a test of more than the devices hold.
    case payoutTest(amount: String, confirmed: Bool = false)
    /// The technician emptied the cash box (service mode): the machine's count since the last
    /// collection is journaled as the collection and sent to the fleet; the box counts from zero.
    case cashCollect
    /// A technician serviced a temperature zone (service mode): its health lock clears.
    case zoneService(zone: String)
    /// The zones' temperatures over the last `minutes` (default: all kept), or one zone's.
    case temps(zone: String?, minutes: Int?)
    /// A technician (service mode) forgets the DDCMP security and pass code the machine learnt.
    case dexClearPassCode

    public var op: String {
        switch self {
        case .status: "status"
        case .watch: "watch"
        case .sim(let command): command.op
        case .slotClear: "slot-clear"
        case .select: "select"
        case .coinReturn: "coin-return"
        case .restock: "restock"
        case .unload: "unload"
        case .stock: "stock"
        case .purchasable: "purchasable"
        case .expired: "expired"
        case .hot: "hot"
        case .products: "products"
        case .price, .priceLine: "price"
        case .prices: "prices"
        case .service: "service"
        case .history: "history"
        case .coins: "coins"
        case .sales: "sales"
        case .fill: "fill"
        case .payoutTest: "payout-test"
        case .cashCollect: "cash-collect"
        case .zoneService: "zone-service"
        case .temps: "temps"
        case .dexClearPassCode: "dex-clear-pass-code"
        }
    }

    public static let knownOps =
        [
            "status", "watch", "restock", "unload", "select", "coin-return", "stock", "purchasable", "expired", "hot", "products", "price", "prices",
            "service", "history", "coins", "sales", "fill", "payout-test", "cash-collect", "zone-service", "slot-clear", "temps",
            "dex-clear-pass-code",
        ] + SimCommand.knownOps

    /// Who may send the command.
    public enum Permission: Sendable {
        /// Anyone who reaches the socket: it only looks.
        case anyone
        /// The customer group (the display) and the technicians: what a customer does at the machine.
        case customer
        /// The customer group too, but only while the service key is on: the key is the authorisation.
        case serviceKey
        /// The technician group only.
        case technician
    }

    public var permission: Permission {
        switch self {
        case .status, .watch, .stock, .purchasable, .expired, .hot, .products, .history, .coins, .sales, .temps, .prices: .anyone
        case .select, .coinReturn: .customer
        case .restock, .unload: .serviceKey
        case .sim, .price, .priceLine, .service, .fill, .payoutTest, .cashCollect, .zoneService, .slotClear, .dexClearPassCode: .technician
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
    enum Key: String, CodingKey {
        case v, op, slot, amount, list, payment, yes, succeeds, count, loadedAt, at, on, since, limit, reader, action, zone, value, fault, minutes
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        version = try container.decode(Int.self, forKey: .v)
        let op = try container.decode(String.self, forKey: .op)
        switch op {
        case "status": command = .status
        case "watch": command = .watch
        case "slot-clear": command = .slotClear(slot: try container.decode(String.self, forKey: .slot))
        case "select": command = .select(slot: try container.decode(String.self, forKey: .slot))
        case "coin-return": command = .coinReturn
        case "restock":
            command = .restock(
                slot: try container.decode(String.self, forKey: .slot),
                count: try container.decodeIfPresent(Int.self, forKey: .count),
                loadedAt: try container.decodeIfPresent(Int64.self, forKey: .loadedAt))
        case "unload":
            command = .unload(
                slot: try container.decode(String.self, forKey: .slot), count: try container.decodeIfPresent(Int.self, forKey: .count))
        case "stock": command = .stock
        case "purchasable": command = .purchasable
        case "expired": command = .expired(at: try container.decodeIfPresent(Int64.self, forKey: .at))
        case "hot": command = .hot
        case "products": command = .products
        case "price": command = try Self.price(container)
        case "prices": command = .prices
        case "service": command = .service(on: try container.decode(Bool.self, forKey: .on))
        case "history":
            command = .history(
                since: try container.decodeIfPresent(Int64.self, forKey: .since),
                limit: try container.decodeIfPresent(Int.self, forKey: .limit))
        case "coins": command = .coins
        case "sales": command = .sales(since: try container.decodeIfPresent(Int64.self, forKey: .since))
        case "fill": command = .fill(on: try container.decode(Bool.self, forKey: .on))
        case "payout-test":
            command = .payoutTest(
                amount: try container.decode(String.self, forKey: .amount),
                confirmed: try container.decodeIfPresent(Bool.self, forKey: .yes) ?? false)
        case "cash-collect": command = .cashCollect
        case "zone-service": command = .zoneService(zone: try container.decode(String.self, forKey: .zone))
        case "dex-clear-pass-code": command = .dexClearPassCode
        case "temps":
            command = .temps(
                zone: try container.decodeIfPresent(String.self, forKey: .zone), minutes: try container.decodeIfPresent(Int.self, forKey: .minutes))
        default:
            guard let simulated = try SimCommand(op: op, container) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .op, in: container,
                    debugDescription: "unknown op '\(op)' (known: \(ControlCommand.knownOps.joined(separator: ", ")))")
            }
            command = .sim(simulated)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(version, forKey: .v)
        try container.encode(command.op, forKey: .op)
        switch command {
        case .status, .watch, .coinReturn, .stock, .purchasable, .hot, .products, .coins, .cashCollect, .dexClearPassCode, .prices: break
        case .sim(let command): try command.encodeFields(into: &container)
        case .select(let slot): try container.encode(slot, forKey: .slot)
        case .fill(let on): try container.encode(on, forKey: .on)
        case .payoutTest(let amount, let confirmed):
            try container.encode(amount, forKey: .amount)
            if confirmed { try container.encode(true, forKey: .yes) }
        case .slotClear(let slot): try container.encode(slot, forKey: .slot)
        case .restock(let slot, let count, let loadedAt):
            try container.encode(slot, forKey: .slot)
            try container.encodeIfPresent(count, forKey: .count)
            try container.encodeIfPresent(loadedAt, forKey: .loadedAt)
        case .unload(let slot, let count):
            try container.encode(slot, forKey: .slot)
            try container.encodeIfPresent(count, forKey: .count)
        case .expired(let at): try container.encodeIfPresent(at, forKey: .at)
        case .price(let slot, let amount):
            try container.encode(slot, forKey: .slot)
            try container.encode(amount, forKey: .amount)
        case .priceLine(let slot, let amount, let list, let payment):
            try container.encode(slot, forKey: .slot)
            try container.encode(amount, forKey: .amount)
            try container.encode(list, forKey: .list)
            try container.encode(payment.rawValue, forKey: .payment)
        case .service(let on): try container.encode(on, forKey: .on)
        case .history(let since, let limit):
            try container.encodeIfPresent(since, forKey: .since)
            try container.encodeIfPresent(limit, forKey: .limit)
        case .sales(let since): try container.encodeIfPresent(since, forKey: .since)
        case .zoneService(let zone): try container.encode(zone, forKey: .zone)
        case .temps(let zone, let minutes):
            try container.encodeIfPresent(zone, forKey: .zone)
            try container.encodeIfPresent(minutes, forKey: .minutes)
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
        /// vendd serves as many clients as it allows; try again in a moment.
        case busy
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// One response line. A query's answer is in the member named after it (`status`, `stock`, …);
/// `message` says what a command did.
public struct ControlResponse: Codable, Sendable, Equatable {
    public let v: Int
    public let ok: Bool
    public let message: String?
    public private(set) var status: StatusReport?
    public private(set) var stock: [ProductStock]?
    public private(set) var purchasable: PurchasableReport?
    public private(set) var expired: ExpiredReport?
    public private(set) var hot: [ProductInfo]?
    public private(set) var products: CategoryReport?
    public private(set) var history: HistoryReport?
    public private(set) var coins: CoinsReport?
    public private(set) var sales: SalesReport?
    public private(set) var temps: TempsReport?
    public private(set) var prices: PricesReport?
    /// A `cash-collect`'s answer: what the collection took.
    public private(set) var collection: CashBoxReport?
    public let error: ControlError?

    /// A query's answer.
    public enum Answer: Sendable {
        case status(StatusReport)
        case stock([ProductStock])
        case purchasable(PurchasableReport)
        case expired(ExpiredReport)
        case hot([ProductInfo])
        case products(CategoryReport)
        case history(HistoryReport)
        case coins(CoinsReport)
        case sales(SalesReport)
        case temps(TempsReport)
        case prices(PricesReport)
    }

    private init(ok: Bool, message: String?, error: ControlError?) {
        v = ControlProtocol.version
        self.ok = ok
        self.message = message
        self.error = error
    }

    public static func success(_ message: String? = nil, status: StatusReport? = nil) -> ControlResponse {
        var response = ControlResponse(ok: true, message: message, error: nil)
        response.status = status
        return response
    }

    /// A collection made: its sentence, and what it took.
    public static func collected(_ message: String, _ collection: CashBoxReport) -> ControlResponse {
        var response = ControlResponse(ok: true, message: message, error: nil)
        response.collection = collection
        return response
    }

    public static func answer(_ answer: Answer) -> ControlResponse {
        var response = ControlResponse(ok: true, message: nil, error: nil)
        switch answer {
        case .status(let report): response.status = report
        case .stock(let report): response.stock = report
        case .purchasable(let report): response.purchasable = report
        case .expired(let report): response.expired = report
        case .hot(let report): response.hot = report
        case .products(let report): response.products = report
        case .history(let report): response.history = report
        case .coins(let report): response.coins = report
        case .sales(let report): response.sales = report
        case .temps(let report): response.temps = report
        case .prices(let report): response.prices = report
        }
        return response
    }

    public static func failure(_ error: ControlError) -> ControlResponse {
        ControlResponse(ok: false, message: nil, error: error)
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
        /// Present while a motor fault keeps the slot out of service (`jammed`, `motor-missing`,
        /// `away-from-home`); `available` is then 0.
        public var fault: String? = nil
        /// Present while a temperature zone's health lock stops the slot's sales (the zone's id);
        /// `available` is then 0.
        public var healthLock: String? = nil
        /// Present while the slot's next item is past its shelf life: when it expired
        /// (milliseconds since the Unix epoch). `available` is then 0 until a technician unloads
        /// the expired items (`vendctl unload`).
        public var expired: Int64? = nil
        /// `price` is what a cash customer pays now (the band's price during a band, the price
        /// requested while this slot's vend is under way). These are absent while they equal it
        /// (and from older daemons): list 1's price (the "was" of a lower price), each card
        /// reader's price, and what the open card session's card pays.
        public var listPrice: String? = nil
        public var listPriceText: String? = nil
        public var cardPrices: [PaymentPrice]? = nil
        public var sessionPrice: String? = nil
        public var sessionPriceText: String? = nil

        /// What the customer at the machine pays now: the card session's price while one is
        /// open, else the cash price.
        public var customerPrice: String { sessionPrice ?? price }

        public init(
            id: String, product: String, productName: String, price: String, priceText: String,
            available: Int, stock: Int, capacity: Int, earliestExpiry: Int64?, fault: String? = nil, healthLock: String? = nil,
            expired: Int64? = nil
        ) {
            self.fault = fault
            self.healthLock = healthLock
            self.expired = expired
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

    /// A slot's price for one payment (`cashless1`, `cashless2`).
    public struct PaymentPrice: Codable, Sendable, Equatable {
        public let payment: String
        public let price: String
        public let priceText: String

        public init(payment: String, price: String, priceText: String) {
            self.payment = payment
            self.price = price
            self.priceText = priceText
        }
    }

    /// The time band in force: its price list, the list's name, and when it ends.
    public struct PriceBand: Codable, Sendable, Equatable {
        public let list: Int
        public let name: String?
        /// Milliseconds since the Unix epoch.
        public let until: Int64
        /// The machine's local day and time it ends ("sat 18:00").
        public let untilText: String

        public init(list: Int, name: String?, until: Int64, untilText: String) {
            self.list = list
            self.name = name
            self.until = until
            self.untilText = untilText
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
        /// Absent in answers from older v1 daemons, as are the two below.
        public let billsIn: String?
        public let changePaid: String?
        /// Payouts nobody can tell were paid (a device reset mid-payout): count the devices.
        public let unknownPayouts: String?
        /// `sales` is paid in cash; these are what card readers charged, by reader ("cashless1"),
        /// absent without card sales (and from older daemons).
        public var cardSales: [String: String]? = nil
        /// Cards charged for an item that did not come out, which the reader could not refund (all
        /// readers; `cardRefundsLostByReader` per reader).
        public var cardRefundsLost: String? = nil
        public var cardRefundsLostByReader: [String: String]? = nil
        /// Card vends that dispensed nothing and that the reader may have charged, by reader: nobody
        /// can tell. A reader's net charge lies between its card sales + refunds lost and that plus these.
        public var cardPossiblyCharged: [String: String]? = nil
        /// Vends on free-vend cards and test media: no sale.
        public var freeCardVends: Int? = nil
        /// Expired items technicians unloaded, and their value at their slots' prices; absent
        /// while none was (and from older daemons).
        public var discardedItems: Int? = nil
        public var discardedValue: String? = nil
        public var discardedValueText: String? = nil

        public init(
            coinsIn: String, sales: String, refunds: String, itemsSold: Int, failedVends: Int, unknownOutcomes: Int,
            billsIn: String? = nil, changePaid: String? = nil, unknownPayouts: String? = nil
        ) {
            self.coinsIn = coinsIn
            self.sales = sales
            self.refunds = refunds
            self.itemsSold = itemsSold
            self.failedVends = failedVends
            self.unknownOutcomes = unknownOutcomes
            self.billsIn = billsIn
            self.changePaid = changePaid
            self.unknownPayouts = unknownPayouts
        }
    }

    /// One payout device and the coins it says it holds.
    public struct PayoutDevice: Codable, Sendable, Equatable {
        public let description: String
        public let coins: [CoinLevel]

        public init(description: String, coins: [CoinLevel]) {
            self.description = description
            self.coins = coins
        }
    }

    public struct CoinLevel: Codable, Sendable, Equatable {
        public let value: String
        public let valueText: String
        /// Absent when the device cannot count them.
        public let count: Int?
        /// What the device's level sensors say ("low", "ok", "high"), when it has them instead
        /// of a count (a ccTalk hopper); absent otherwise.
        public let level: String?

        public init(value: String, valueText: String, count: Int?, level: String? = nil) {
            self.value = value
            self.valueText = valueText
            self.count = count
            self.level = level
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
    public var books: Books
    /// Absent in answers from older v1 daemons.
    public let health: Health?
    /// Whether the service key is turned: the display shows the technician's screen. Absent in
    /// answers from older v1 daemons.
    public let serviceKey: Bool?
    /// The machine gives change but cannot for every sale now: the displays ask for exact money.
    /// Absent in answers from older v1 daemons, as are the two below.
    public let exactChangeOnly: Bool?
    public let payoutInProgress: String?
    /// Empty unless the payout policy is `change`.
    public let payoutDevices: [PayoutDevice]?
    /// In service mode, coins put in are float for the change stock, not credit.
    public let fillMode: Bool?
    /// The MDB bill validator's stacker, once read.
    public var billStacker: Stacker? = nil
    /// Each configured card reader: its state and identity as its driver describes them.
    public var cardReaders: [CardReaderState]? = nil
    /// The card session open now ("cashless1, funds 5000"), if any.
    public var cardSession: String? = nil
    /// Card money for the operator to settle with the card provider, a sentence per reader:
    /// refunds the reader could not make, vends it may have charged for nothing.
    public var cardMoneyToCheck: [String]? = nil
    /// The vend in progress is a card vend still waiting for the reader's approval (the
    /// displays say so); absent otherwise.
    public var cardVendAwaitingApproval: Bool? = nil
    /// A restricted selection's age check in progress (the displays say what to do); absent otherwise.
    public var ageCheck: AgeCheckState? = nil

    public struct AgeCheckState: Codable, Sendable, Equatable {
        public let slot: String
        public let age: Int
        /// The verifier approved: the customer pays (if need be) and the vend follows.
        public let approved: Bool
        /// Until when (milliseconds since the Unix epoch) it waits for the verifier, or the approval holds.
        public let until: Int64
        /// True when the card reader checks (the customer shows an ID there); absent when an
        /// attendant or an ID scanner does.
        public var atReader: Bool? = nil

        public init(slot: String, age: Int, approved: Bool, until: Int64) {
            self.slot = slot
            self.age = age
            self.approved = approved
            self.until = until
        }
    }
    /// How many vends the machine has started, cash or card (the last was vend#N); absent from
    /// older daemons.
    public var vendsStarted: UInt64? = nil
    /// What the cash box took since the last collection; absent from older daemons.
    public var cashBox: CashBoxReport? = nil
    /// The time band whose price list applies now; absent outside bands (and from older daemons).
    public var priceBand: PriceBand? = nil
    /// When a time band next begins or ends (milliseconds since the Unix epoch): no event says
    /// so, and the displays ask for the status again then. Absent without bands.
    public var nextPriceChange: Int64? = nil

    public struct CardReaderState: Codable, Sendable, Equatable {
        /// 1 (10h) or 2 (60h).
        public let reader: Int
        public let ready: Bool
        public let description: String

        public init(reader: Int, ready: Bool, description: String) {
            self.reader = reader
            self.ready = ready
            self.description = description
        }
    }

    public struct Stacker: Codable, Sendable, Equatable {
        public let bills: Int
        public let capacity: Int
        public let full: Bool

        public init(bills: Int, capacity: Int, full: Bool) {
            self.bills = bills
            self.capacity = capacity
            self.full = full
        }
    }
    /// The MQTT link and its outbox; absent without an `mqtt:` section (and from older daemons).
    public var fleetOutbox: FleetOutbox? = nil
    /// The DEX port; absent without one (and from older daemons).
    public var dexPort: DEXPort? = nil
    /// The temperature zones; absent without a `zones:` section (and from older daemons).
    public var zones: [Zone]? = nil
    /// `C` or `F`: how the machine's file says to show the zones' temperatures to people (the
    /// temperatures themselves are decimal °C); absent without zones (and from older daemons).
    public var temperatureUnit: String? = nil

    public struct FleetOutbox: Codable, Sendable, Equatable {
        public let broker: String
        public let connected: Bool
        /// Events not yet acknowledged by the broker (with `keep_until_stored`, by the store).
        public let pending: Int
        /// When the oldest of them happened, in milliseconds since the Unix epoch.
        public let oldest: Int64?
        /// The last sequence number given to an event (absent from older daemons).
        public var lastSeq: UInt64? = nil
        /// With `keep_until_stored`: the fleet store's acknowledged sequence (absent until it is
        /// heard), and how many events the broker has that wait for it.
        public var storedSeq: UInt64? = nil
        public var awaitingStore: Int? = nil

        public init(broker: String, connected: Bool, pending: Int, oldest: Int64?) {
            self.broker = broker
            self.connected = connected
            self.pending = pending
            self.oldest = oldest
        }
    }

    public init(
        machine: String, state: String, stateReason: String?, currency: String, credit: String, creditText: String,
        acceptingCoins: Bool, vendInProgress: String?, simulated: Bool, coinAcceptor: String, gpio: String, slots: [Slot],
        books: Books, health: Health? = nil, serviceKey: Bool? = nil, exactChangeOnly: Bool? = nil,
        payoutInProgress: String? = nil, payoutDevices: [PayoutDevice]? = nil, fillMode: Bool? = nil
    ) {
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
        self.health = health
        self.serviceKey = serviceKey
        self.exactChangeOnly = exactChangeOnly
        self.payoutInProgress = payoutInProgress
        self.payoutDevices = payoutDevices
        self.fillMode = fillMode
    }

    /// Whether the hardware works, as far as vendd can tell.
    public struct Health: Codable, Sendable, Equatable {
        public struct Component: Codable, Sendable, Equatable {
            public let ok: Bool
            /// What the component is ("simulated (21 lines)").
            public let description: String
            /// The latest thing it reported (a fault, a reconnect), and when.
            public let notice: String?
            public let noticeAt: Int64?

            public init(ok: Bool, description: String, notice: String? = nil, noticeAt: Int64? = nil) {
                self.ok = ok
                self.description = description
                self.notice = notice
                self.noticeAt = noticeAt
            }
        }

        public let gpio: Component
        public let coinAcceptor: Component

        public init(gpio: Component, coinAcceptor: Component) {
            self.gpio = gpio
            self.coinAcceptor = coinAcceptor
        }
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
