/// How a sale came to be counted as one.
public enum SaleConfirmation: String, Hashable, Sendable, Codable {
    /// The drop sensor saw the item fall.
    case dropSensor = "drop-sensor"
    /// The relay pulsed on a slot that has no drop sensor.
    case relayOnly = "relay-only"
    /// Nobody saw the outcome; the unknown-outcome policy counted it as sold.
    case assumed
}

/// One completed purchase.
public struct Sale: Hashable, Sendable, Codable {
    public let vend: VendID
    public let slot: SlotID
    public let product: ProductID
    public let price: Money
    public let at: Instant
    public let confirmation: SaleConfirmation

    public init(vend: VendID, slot: SlotID, product: ProductID, price: Money, at: Instant, confirmation: SaleConfirmation) {
        self.vend = vend
        self.slot = slot
        self.product = product
        self.price = price
        self.at = at
        self.confirmation = confirmation
    }
}

/// How many items of something sold, and for how much.
public struct SalesFigure: Hashable, Sendable, Codable {
    public private(set) var count: Int
    public private(set) var amount: Money

    public static func zero(_ currency: Currency) -> SalesFigure {
        SalesFigure(count: 0, amount: .zero(currency))
    }

    mutating func add(_ price: Money) {
        count += 1
        amount += price
    }

    mutating func add(_ other: SalesFigure) {
        count += other.count
        amount += other.amount
    }
}

/// Coins of one denomination that went into the cash box.
public struct CoinCount: Hashable, Sendable, Codable {
    public let value: Money
    public fileprivate(set) var count: Int
}

/// The machine's books. Every accepted coin lands in `coinsIn` and stays accounted for:
/// `coinsIn == sales + refunds + credit + the price held by a vend in flight`.
public struct Ledger: Hashable, Sendable, Codable {
    public private(set) var coinsIn: Money
    public private(set) var sales: Money
    public private(set) var refunds: Money
    /// Per denomination, smallest first.
    public private(set) var cashbox: [CoinCount] = []
    public private(set) var salesByProduct: [ProductID: SalesFigure] = [:]
    public private(set) var salesBySlot: [SlotID: SalesFigure] = [:]
    /// The most recent sales, oldest first, at most `MachineSetup.historyLimit` of them.
    public private(set) var history: [Sale] = []
    public private(set) var failedVends = 0
    public private(set) var unknownOutcomes = 0

    init(currency: Currency) {
        coinsIn = .zero(currency)
        sales = .zero(currency)
        refunds = .zero(currency)
    }

    var isEmpty: Bool { coinsIn.isZero && cashbox.isEmpty && history.isEmpty && salesByProduct.isEmpty }

    mutating func recordCoin(_ value: Money) {
        coinsIn += value
        if let index = cashbox.firstIndex(where: { $0.value == value }) {
            cashbox[index].count += 1
        } else {
            cashbox.append(CoinCount(value: value, count: 1))
            cashbox.sort { $0.value < $1.value }
        }
    }

    mutating func recordSale(_ sale: Sale, historyLimit: Int) {
        sales += sale.price
        salesByProduct[sale.product, default: .zero(sale.price.currency)].add(sale.price)
        salesBySlot[sale.slot, default: .zero(sale.price.currency)].add(sale.price)
        history.append(sale)
        if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
    }

    mutating func recordRefund(_ amount: Money) { refunds += amount }
    mutating func recordFailedVend() { failedVends += 1 }
    mutating func recordUnknownOutcome() { unknownOutcomes += 1 }
}
