/// What a machine's retained `stock`, `cash` and `zones/<zone>` messages say, as columns
/// (schema version 2). Amounts stay the exact decimal strings vendd sends ("1.50", "1200"): the
/// machine's currency decides the digits, and PostgreSQL's `::numeric` reads them exactly.

/// One slot as the latest `stock` message gives it.
public struct SlotPosition: Sendable, Equatable {
    public let slot: String
    public let product: String
    public let price: String
    /// Items that can be sold now (not expired).
    public let available: Int64
    public let stock: Int64
    public let capacity: Int64
    /// Milliseconds since the epoch; nil when nothing in the slot expires.
    public let earliestExpiry: Int64?

    public init(slot: String, product: String, price: String, available: Int64, stock: Int64, capacity: Int64, earliestExpiry: Int64?) {
        self.slot = slot
        self.product = product
        self.price = price
        self.available = available
        self.stock = stock
        self.capacity = capacity
        self.earliestExpiry = earliestExpiry
    }
}

/// A machine's books as the latest `cash` message gives them (since the machine was new).
public struct CashPosition: Sendable, Equatable {
    public let currency: String
    public let coinsIn: String
    public let sales: String
    public let refunds: String
    public let billsIn: String?
    public let changePaid: String?
    public let unknownPayouts: String?
    public let exactChangeOnly: Bool?

    public init(
        currency: String, coinsIn: String, sales: String, refunds: String, billsIn: String?, changePaid: String?, unknownPayouts: String?,
        exactChangeOnly: Bool?
    ) {
        self.currency = currency
        self.coinsIn = coinsIn
        self.sales = sales
        self.refunds = refunds
        self.billsIn = billsIn
        self.changePaid = changePaid
        self.unknownPayouts = unknownPayouts
        self.exactChangeOnly = exactChangeOnly
    }
}

/// One temperature zone as its latest `zones/<zone>` message gives it (temperatures in °C).
public struct ZonePosition: Sendable, Equatable {
    public let zone: String
    public let kind: String
    public let health: String
    public let temperature: String?
    public let sensorFault: String?
    public let setPoint: String?
    public let relayOn: Bool?
    public let maxReached: String?
    public let since: Int64?
    public let cause: String?
    /// When the machine sent it.
    public let at: Int64?

    public init(
        zone: String, kind: String, health: String, temperature: String?, sensorFault: String?, setPoint: String?, relayOn: Bool?,
        maxReached: String?, since: Int64?, cause: String?, at: Int64?
    ) {
        self.zone = zone
        self.kind = kind
        self.health = health
        self.temperature = temperature
        self.sensorFault = sensorFault
        self.setPoint = setPoint
        self.relayOn = relayOn
        self.maxReached = maxReached
        self.since = since
        self.cause = cause
        self.at = at
    }
}

/// A retained message read into columns; nil in `RetainedUpdate` for `state` (its payload only).
public enum RetainedColumns: Sendable, Equatable {
    /// The whole machine: slots absent from it are gone (reconfigured away).
    case stock(currency: String, slots: [SlotPosition])
    case cash(CashPosition)
    case zone(ZonePosition)
}

extension Bool {
    /// Booleans as 0/1 integers: SQLite has no boolean type, and one schema serves both engines.
    var storedInteger: Int64 { self ? 1 : 0 }
}
