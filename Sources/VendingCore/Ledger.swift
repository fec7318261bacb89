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
    public let payment: Payment
    /// The machine's price list the price came from (EVA-DTS PA703).
    public let priceList: PriceListNumber

    public init(
        vend: VendID, slot: SlotID, product: ProductID, price: Money, at: Instant, confirmation: SaleConfirmation, payment: Payment = .cash,
        priceList: PriceListNumber = .standardList
    ) {
        self.vend = vend
        self.slot = slot
        self.product = product
        self.price = price
        self.at = at
        self.confirmation = confirmation
        self.payment = payment
        self.priceList = priceList
    }

    private enum CodingKeys: String, CodingKey { case vend, slot, product, price, at, confirmation, payment, priceList }

    /// Sales recorded before cards were taken were paid in cash; before price lists, at list 1.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            vend: try container.decode(VendID.self, forKey: .vend), slot: try container.decode(SlotID.self, forKey: .slot),
            product: try container.decode(ProductID.self, forKey: .product), price: try container.decode(Money.self, forKey: .price),
            at: try container.decode(Instant.self, forKey: .at), confirmation: try container.decode(SaleConfirmation.self, forKey: .confirmation),
            payment: try container.decodeIfPresent(Payment.self, forKey: .payment) ?? .cash,
            priceList: try container.decodeIfPresent(PriceListNumber.self, forKey: .priceList) ?? .standardList)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(vend, forKey: .vend)
        try container.encode(slot, forKey: .slot)
        try container.encode(product, forKey: .product)
        try container.encode(price, forKey: .price)
        try container.encode(at, forKey: .at)
        try container.encode(confirmation, forKey: .confirmation)
        try container.encode(payment, forKey: .payment)
        // Written only off list 1, so that a record without it stays readable by an older vendd.
        if priceList != .standardList { try container.encode(priceList, forKey: .priceList) }
    }

    /// A sale to count: not a free-vend card or test media.
    public var isSale: Bool { if case .freeCard = payment { false } else { true } }
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

    mutating func add(count: Int, amount: Money) {
        self.count += count
        self.amount += amount
    }

    mutating func add(_ other: SalesFigure) {
        count += other.count
        amount += other.amount
    }
}

/// Coins (or bills) of one denomination that went into the cash box (or the stacker).
public struct CoinCount: Hashable, Sendable, Codable {
    public let value: Money
    public internal(set) var count: Int

    public init(value: Money, count: Int) {
        self.value = value
        self.count = count
    }
}

/// The machine's books. Every accepted coin and stacked bill stays accounted for:
/// `coinsIn + billsIn == sales + changePaid + refunds + unknownPayouts + credit + the price held
/// by a vend in flight + the amount held by a customer's payout in flight`.
/// The technician's float (fill mode) and what left the devices' stock outside customers'
/// payouts (payout tests, a changer's own buttons) are kept beside them, not in that sum.
public struct Ledger: Hashable, Sendable, Codable {
    public private(set) var coinsIn: Money
    /// Sales paid in cash (card sales are in `cardSales`: they never enter the cash books).
    public private(set) var sales: Money
    /// Sales paid by card, per reader: what the readers charged.
    public private(set) var cardSales: [CardReader: SalesFigure] = [:]
    /// Cards charged for an item that did not come out, which their reader could not refund, per
    /// reader: the operator refunds them through the card provider.
    public private(set) var cardRefundsLost: [CardReader: SalesFigure] = [:]
    /// Card vends that dispensed nothing and that their reader may have charged, per reader:
    /// nobody can tell (see `CardSettlementResult.unknown`). The operator checks them against the
    /// provider's settlement; a reader's net charge lies between the books' card money and that
    /// plus these.
    public private(set) var cardPossiblyCharged: [CardReader: SalesFigure] = [:]
    /// Items that left on free-vend cards and test media: no sale.
    public private(set) var freeCardVends = 0
    /// Money handed back other than change: coin return and failed vends, by hand or by device.
    public private(set) var refunds: Money
    /// Every coin put in per denomination, smallest first, wherever it went (the cash box or
    /// the tubes): `coinsIn` counted out. What the cash box holds is `cashBox`.
    public private(set) var cashbox: [CoinCount] = []
    /// The cash box's coins and the stacker's bills since the last collection.
    public private(set) var cashBox = CashBox()
    public private(set) var billsIn: Money
    /// Bills in the stacker per denomination, smallest first.
    public private(set) var stacker: [CoinCount] = []
    /// Change the payout devices paid after sales.
    public private(set) var changePaid: Money
    /// Payouts nobody can tell were paid (a device lost its counters mid-payout): neither credit
    /// nor paid; the technician counts the tubes or hoppers to settle them.
    public private(set) var unknownPayouts: Money
    /// Of `coinsIn`, the coins that went to the payout devices' stock (an MDB changer's tubes).
    public private(set) var coinsToTubes: Money
    /// Of `changePaid + refunds`, what the payout devices paid (the rest an attendant paid by hand).
    public private(set) var dispensed: Money
    /// Coins and bills put in during fill mode.
    public private(set) var floatFilled: Money
    /// Paid by payout tests.
    public private(set) var testPayouts: Money
    /// Payout tests nobody can tell were paid (count the devices).
    public private(set) var unknownTestPayouts: Money
    /// Paid out by a device's own buttons (an MDB changer's manual dispense).
    public private(set) var manuallyDispensed: Money
    /// Items past their shelf life that technicians unloaded, per product: how many, valued at
    /// their slot's price when they were taken out. Stock, not money: outside the sum above.
    public private(set) var discarded: [ProductID: SalesFigure] = [:]
    public private(set) var salesByProduct: [ProductID: SalesFigure] = [:]
    public private(set) var salesBySlot: [SlotID: SalesFigure] = [:]
    /// Paid sales per slot, payment and price list (EVA-DTS PA7); empty in books from before lists.
    public private(set) var salesByList: [PriceListSales: SalesFigure] = [:]
    /// The most recent sales, oldest first, at most `MachineSetup.historyLimit` of them.
    public private(set) var history: [Sale] = []
    public private(set) var failedVends = 0
    public private(set) var unknownOutcomes = 0

    init(currency: Currency) {
        coinsIn = .zero(currency)
        sales = .zero(currency)
        refunds = .zero(currency)
        billsIn = .zero(currency)
        changePaid = .zero(currency)
        unknownPayouts = .zero(currency)
        coinsToTubes = .zero(currency)
        dispensed = .zero(currency)
        floatFilled = .zero(currency)
        testPayouts = .zero(currency)
        unknownTestPayouts = .zero(currency)
        manuallyDispensed = .zero(currency)
    }

    /// Books written before bills, payout devices and fill mode existed decode with those at zero.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        coinsIn = try container.decode(Money.self, forKey: .coinsIn)
        sales = try container.decode(Money.self, forKey: .sales)
        refunds = try container.decode(Money.self, forKey: .refunds)
        cashbox = try container.decode([CoinCount].self, forKey: .cashbox)
        salesByProduct = try container.decode([ProductID: SalesFigure].self, forKey: .salesByProduct)
        salesBySlot = try container.decode([SlotID: SalesFigure].self, forKey: .salesBySlot)
        history = try container.decode([Sale].self, forKey: .history)
        failedVends = try container.decode(Int.self, forKey: .failedVends)
        unknownOutcomes = try container.decode(Int.self, forKey: .unknownOutcomes)
        let zero = Money.zero(coinsIn.currency)
        billsIn = try container.decodeIfPresent(Money.self, forKey: .billsIn) ?? zero
        stacker = try container.decodeIfPresent([CoinCount].self, forKey: .stacker) ?? []
        changePaid = try container.decodeIfPresent(Money.self, forKey: .changePaid) ?? zero
        unknownPayouts = try container.decodeIfPresent(Money.self, forKey: .unknownPayouts) ?? zero
        coinsToTubes = try container.decodeIfPresent(Money.self, forKey: .coinsToTubes) ?? zero
        dispensed = try container.decodeIfPresent(Money.self, forKey: .dispensed) ?? zero
        floatFilled = try container.decodeIfPresent(Money.self, forKey: .floatFilled) ?? zero
        testPayouts = try container.decodeIfPresent(Money.self, forKey: .testPayouts) ?? zero
        unknownTestPayouts = try container.decodeIfPresent(Money.self, forKey: .unknownTestPayouts) ?? zero
        manuallyDispensed = try container.decodeIfPresent(Money.self, forKey: .manuallyDispensed) ?? zero
        cardSales = try container.decodeIfPresent([CardReader: SalesFigure].self, forKey: .cardSales) ?? [:]
        if let byReader = try? container.decodeIfPresent([CardReader: SalesFigure].self, forKey: .cardRefundsLost) {
            cardRefundsLost = byReader
        } else if let total = try container.decodeIfPresent(Money.self, forKey: .cardRefundsLost), !total.isZero {
            // Books from before readers were kept apart: one total, and only reader #1 existed then.
            cardRefundsLost = [.first: SalesFigure(count: 1, amount: total)]
        }
        cardPossiblyCharged = try container.decodeIfPresent([CardReader: SalesFigure].self, forKey: .cardPossiblyCharged) ?? [:]
        freeCardVends = try container.decodeIfPresent(Int.self, forKey: .freeCardVends) ?? 0
        discarded = try container.decodeIfPresent([ProductID: SalesFigure].self, forKey: .discarded) ?? [:]
        // Books from before collections: the box's contents are unknown, counted from now.
        cashBox = try container.decodeIfPresent(CashBox.self, forKey: .cashBox) ?? CashBox()
        salesByList = try container.decodeIfPresent([PriceListSales: SalesFigure].self, forKey: .salesByList) ?? [:]
    }

    var isEmpty: Bool {
        coinsIn.isZero && billsIn.isZero && cashbox.isEmpty && stacker.isEmpty && history.isEmpty && salesByProduct.isEmpty
            && floatFilled.isZero && testPayouts.isZero && manuallyDispensed.isZero && cardSales.isEmpty && freeCardVends == 0
            && discarded.isEmpty && cashBox.coins.isEmpty && cashBox.bills.isEmpty
    }

    /// Everything customers put in.
    public var moneyIn: Money { coinsIn + billsIn }

    mutating func recordCoin(_ value: Money, route: CoinRoute) {
        coinsIn += value
        if route == .tubes { coinsToTubes += value }
        cashbox.count(value)
    }

    /// A coin (`route` given) or a bill (nil) that physically went into the cash box or the
    /// stacker, float put in during fill mode included: what the next collection finds.
    mutating func recordInCashBox(_ value: Money, route: CoinRoute?) {
        switch route {
        case .cashBox: cashBox.addCoin(value)
        case nil: cashBox.addBill(value)
        case .tubes: break
        }
    }

    mutating func collectCashBox(at now: Instant, by technician: String) -> CashCollection {
        cashBox.collect(at: now, by: technician, currency: coinsIn.currency)
    }

    mutating func recordFloat(_ value: Money) { floatFilled += value }
    mutating func recordManualDispense(_ amount: Money) { manuallyDispensed += amount }

    mutating func recordBill(_ value: Money) {
        billsIn += value
        stacker.count(value)
    }

    /// Money a payout device (or, not `byDevice`, an attendant) handed back for `reason`.
    mutating func recordPayout(_ amount: Money, for reason: PayoutReason, byDevice: Bool) {
        switch reason {
        case .change: changePaid += amount
        case .coinReturn, .failedVend: refunds += amount
        case .test: testPayouts += amount
        }
        if byDevice, reason.isCustomers { dispensed += amount }
    }

    mutating func recordUnknownPayout(_ amount: Money, for reason: PayoutReason) {
        if reason.isCustomers { unknownPayouts += amount } else { unknownTestPayouts += amount }
    }

    mutating func recordSale(_ sale: Sale, historyLimit: Int) {
        history.append(sale)
        if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
        switch sale.payment {
        case .cash: sales += sale.price
        case .card(let reader): cardSales[reader, default: .zero(sale.price.currency)].add(sale.price)
        case .freeCard:
            freeCardVends += 1
            return
        }
        salesByProduct[sale.product, default: .zero(sale.price.currency)].add(sale.price)
        salesBySlot[sale.slot, default: .zero(sale.price.currency)].add(sale.price)
        salesByList[PriceListSales(slot: sale.slot, payment: sale.payment, list: sale.priceList), default: .zero(sale.price.currency)]
            .add(sale.price)
    }

    mutating func recordDiscard(of product: ProductID, count: Int, value: Money) {
        discarded[product, default: .zero(value.currency)].add(count: count, amount: value)
    }

    /// Every discarded item, all products together.
    public var discardedTotal: SalesFigure? {
        guard let first = discarded.values.first else { return nil }
        var total = SalesFigure.zero(first.amount.currency)
        for figure in discarded.values { total.add(figure) }
        return total
    }

    mutating func recordCardRefundLost(_ amount: Money, on reader: CardReader) {
        cardRefundsLost[reader, default: .zero(amount.currency)].add(amount)
    }

    mutating func recordCardPossiblyCharged(_ amount: Money, on reader: CardReader) {
        cardPossiblyCharged[reader, default: .zero(amount.currency)].add(amount)
    }

    mutating func recordFailedVend() { failedVends += 1 }
    mutating func recordUnknownOutcome() { unknownOutcomes += 1 }
}
