/// A slot as a customer sees it: what it sells, at what price, how many are left.
public struct Offer: Hashable, Sendable, Codable {
    public let slot: SlotID
    public let product: Product
    public let price: Money
    public let available: Int
}

/// Items past their shelf life in one slot.
public struct ExpiredStock: Hashable, Sendable, Codable {
    public let slot: SlotID
    public let product: ProductID
    public let count: Int
    /// When the oldest of them expired.
    public let since: Instant

    public init(slot: SlotID, product: ProductID, count: Int, since: Instant) {
        self.slot = slot
        self.product = product
        self.count = count
        self.since = since
    }
}

extension Machine {
    /// Every configured slot in display order.
    public var offers: [Offer] {
        setup.slots.compactMap { slot in
            guard let product = setup.catalog[slot.product], let price = price(of: slot.id) else { return nil }
            // A health-locked slot, or one out of service after a motor fault, offers nothing: the
            // kiosk and the LCD show it as not available.
            return Offer(slot: slot.id, product: product, price: price, available: sellable(slot.id) ? available(in: slot.id) : 0)
        }
    }

    /// Slots a customer can buy from with the current credit, at list 1's prices.
    public var purchasable: [Offer] {
        offers.filter { $0.available > 0 && $0.price <= credit }
    }

    /// Slots a customer can buy from with the current credit at `instant`: at the cash price
    /// then (a band's during a band).
    public func purchasable(at instant: Instant) -> [Offer] {
        offers.filter { offer in
            offer.available > 0 && price(of: offer.slot, payment: .cash, at: instant).map { $0.price <= credit } == true
        }
    }

    /// Items available per product, over all slots; products in a slot but sold out count 0.
    public var stockByProduct: [ProductID: Int] {
        offers.reduce(into: [:]) { totals, offer in totals[offer.product.id, default: 0] += offer.available }
    }

    /// Items whose shelf life has ended at `instant`, per slot.
    public func expiredStock(at instant: Instant) -> [ExpiredStock] {
        setup.slots.compactMap { slot in
            let shelfLife = setup.catalog[slot.product]?.shelfLifeDays
            guard let slotStock = stock[slot.id] else { return nil }
            let count = slotStock.expiredCount(at: instant, shelfLifeDays: shelfLife)
            guard count > 0, let since = slotStock.earliestExpiry(shelfLifeDays: shelfLife) else { return nil }
            return ExpiredStock(slot: slot.id, product: slot.product, count: count, since: since)
        }
    }

    /// When the first item in `slot` expires, if any does.
    public func earliestExpiry(in slot: SlotID) -> Instant? {
        guard let product = setup.slot(slot)?.product else { return nil }
        return stock[slot]?.earliestExpiry(shelfLifeDays: setup.catalog[product]?.shelfLifeDays)
    }

    /// Hot products that some slot sells.
    public var hotProducts: [Product] {
        let sold = Set(setup.slots.map(\.product))
        return setup.catalog.hotProducts.filter { sold.contains($0.id) }
    }

    /// Sales at or after `instant` (pass the daemon's start for "since start-up"), oldest first.
    public func history(since instant: Instant? = nil) -> [Sale] {
        guard let instant else { return ledger.history }
        return ledger.history.filter { $0.at >= instant }
    }

    /// Totals per product over the machine's whole life: the technician's sales chart.
    public var salesByProduct: [ProductID: SalesFigure] { ledger.salesByProduct }

    /// Every coin put in per denomination, wherever it went (the cash box or the tubes); what the
    /// cash box took since the last collection is `ledger.cashBox`.
    public var cashCounters: [CoinCount] { ledger.cashbox }
}

/// Sales added up per product and per slot.
public struct SalesTotals: Hashable, Sendable {
    public let byProduct: [ProductID: SalesFigure]
    public let bySlot: [SlotID: SalesFigure]
    public let total: SalesFigure
}

extension Machine {
    /// Totals since the machine was new (from the ledger, exact whatever the history keeps), or
    /// over the kept history at or after `instant`.
    public func salesTotals(since instant: Instant? = nil) -> SalesTotals {
        var byProduct = ledger.salesByProduct, bySlot = ledger.salesBySlot
        if let instant {
            byProduct = [:]
            bySlot = [:]
            for sale in history(since: instant) where sale.isSale {
                byProduct[sale.product, default: .zero(setup.currency)].add(sale.price)
                bySlot[sale.slot, default: .zero(setup.currency)].add(sale.price)
            }
        }
        var total = SalesFigure.zero(setup.currency)
        for figure in byProduct.values { total.add(figure) }
        return SalesTotals(byProduct: byProduct, bySlot: bySlot, total: total)
    }

    /// Whether the kept history holds every sale at or after `instant` (it keeps the most recent
    /// `historyLimit`).
    public func historyCovers(since instant: Instant) -> Bool {
        let everSold = ledger.salesByProduct.values.reduce(0) { $0 + $1.count } + ledger.freeCardVends
        guard everSold > ledger.history.count, let oldestKept = ledger.history.first else { return everSold == ledger.history.count }
        return instant > oldestKept.at
    }
}
