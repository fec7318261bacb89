/// The whole-life figures an EVA-DTS audit reports, taken from the ledger at one instant. The
/// figures a DEX read resets ("since last reset", the interim figures) are the ledger's now
/// minus the totals of the last audit a handheld acknowledged: the ledger itself is never
/// reset, so a read that fails halfway loses nothing, and sales made while the audit was on
/// the wire count in the next read, not in none or both.
public struct AuditTotals: Hashable, Sendable, Codable {
    public var bySlot: [SlotID: SalesFigure]
    public var sales: SalesFigure
    /// `sales` split by how they were paid, keyed `cash`, `cashless1`, `cashless2` (Payment's names).
    public var byPayment: [String: SalesFigure]
    public var coinsIn: Money
    public var coinsToTubes: Money
    public var billsIn: Money
    /// What the payout devices paid to customers (change, refunds).
    public var dispensed: Money
    /// Payout tests and a changer's own buttons.
    public var manuallyDispensed: Money
    public var filled: Money
    /// Each incident's occurrences as the "since last reset" count starts from them (see
    /// `Machine.incidentCountsForReset`). Empty in totals saved before incidents were kept.
    public var incidents: [Incident: Int] = [:]
    /// Paid sales per slot, payment and price list (PA7). Empty in totals saved before lists.
    public var byList: [PriceListSales: SalesFigure] = [:]

    /// Nothing yet: the base of the interim figures of a machine never read.
    public static func zero(_ currency: Currency) -> AuditTotals {
        let zero = Money.zero(currency)
        return AuditTotals(
            bySlot: [:], sales: .zero(currency), byPayment: [:], coinsIn: zero, coinsToTubes: zero, billsIn: zero, dispensed: zero,
            manuallyDispensed: zero, filled: zero)
    }

    public init(
        bySlot: [SlotID: SalesFigure], sales: SalesFigure, byPayment: [String: SalesFigure], coinsIn: Money, coinsToTubes: Money, billsIn: Money,
        dispensed: Money,
        manuallyDispensed: Money, filled: Money
    ) {
        self.bySlot = bySlot
        self.sales = sales
        self.byPayment = byPayment
        self.coinsIn = coinsIn
        self.coinsToTubes = coinsToTubes
        self.billsIn = billsIn
        self.dispensed = dispensed
        self.manuallyDispensed = manuallyDispensed
        self.filled = filled
    }

    public init(_ ledger: Ledger) {
        var sales = SalesFigure.zero(ledger.coinsIn.currency)
        for figure in ledger.salesBySlot.values { sales.add(figure) }
        var byPayment: [String: SalesFigure] = [:]
        for (reader, figure) in ledger.cardSales { byPayment[Payment.card(reader).description] = figure }
        let cardCount = ledger.cardSales.values.reduce(0) { $0 + $1.count }
        byPayment[Payment.cash.description] = SalesFigure(count: sales.count - cardCount, amount: ledger.sales)
        self.init(
            bySlot: ledger.salesBySlot, sales: sales, byPayment: byPayment, coinsIn: ledger.coinsIn, coinsToTubes: ledger.coinsToTubes,
            billsIn: ledger.billsIn,
            dispensed: ledger.dispensed, manuallyDispensed: ledger.testPayouts + ledger.manuallyDispensed, filled: ledger.floatFilled)
        byList = ledger.salesByList
    }

    /// These figures less `base`, figure by figure.
    public func since(_ base: AuditTotals) -> AuditTotals {
        var bySlot: [SlotID: SalesFigure] = [:]
        for (slot, figure) in self.bySlot { bySlot[slot] = figure.less(base.bySlot[slot]) }
        var byPayment: [String: SalesFigure] = [:]
        for (payment, figure) in self.byPayment { byPayment[payment] = figure.less(base.byPayment[payment]) }
        var since = AuditTotals(
            bySlot: bySlot, sales: sales.less(base.sales), byPayment: byPayment, coinsIn: coinsIn - base.coinsIn,
            coinsToTubes: coinsToTubes - base.coinsToTubes,
            billsIn: billsIn - base.billsIn, dispensed: dispensed - base.dispensed,
            manuallyDispensed: manuallyDispensed - base.manuallyDispensed, filled: filled - base.filled)
        for (line, figure) in byList { since.byList[line] = figure.less(base.byList[line]) }
        return since
    }

    /// No figure is below its counterpart in `base`: these totals can follow `base`.
    public func covers(_ base: AuditTotals) -> Bool {
        sales.count >= base.sales.count && sales.amount >= base.sales.amount && coinsIn >= base.coinsIn
            && coinsToTubes >= base.coinsToTubes && billsIn >= base.billsIn && dispensed >= base.dispensed
            && manuallyDispensed >= base.manuallyDispensed && filled >= base.filled
            && base.bySlot.allSatisfy { slot, figure in
                (bySlot[slot]?.count ?? 0) >= figure.count && (bySlot[slot]?.amount ?? .zero(figure.amount.currency)) >= figure.amount
            }
            && base.byPayment.allSatisfy { payment, figure in
                (byPayment[payment]?.count ?? 0) >= figure.count && (byPayment[payment]?.amount ?? .zero(figure.amount.currency)) >= figure.amount
            }
            && base.byList.allSatisfy { line, figure in
                (byList[line]?.count ?? 0) >= figure.count && (byList[line]?.amount ?? .zero(figure.amount.currency)) >= figure.amount
            }
    }
}

extension AuditTotals {
    private enum CodingKeys: String, CodingKey {
        case bySlot, sales, byPayment, coinsIn, coinsToTubes, billsIn, dispensed, manuallyDispensed, filled, incidents, byList
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(bySlot, forKey: .bySlot)
        try container.encode(sales, forKey: .sales)
        try container.encode(byPayment, forKey: .byPayment)
        try container.encode(coinsIn, forKey: .coinsIn)
        try container.encode(coinsToTubes, forKey: .coinsToTubes)
        try container.encode(billsIn, forKey: .billsIn)
        try container.encode(dispensed, forKey: .dispensed)
        try container.encode(manuallyDispensed, forKey: .manuallyDispensed)
        try container.encode(filled, forKey: .filled)
        if !incidents.isEmpty { try container.encode(incidents, forKey: .incidents) }
        if !byList.isEmpty { try container.encode(byList, forKey: .byList) }
    }

    /// Totals saved before card readers were taken: every sale was cash.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let sales = try container.decode(SalesFigure.self, forKey: .sales)
        self.init(
            bySlot: try container.decode([SlotID: SalesFigure].self, forKey: .bySlot), sales: sales,
            byPayment: try container.decodeIfPresent([String: SalesFigure].self, forKey: .byPayment) ?? [Payment.cash.description: sales],
            coinsIn: try container.decode(Money.self, forKey: .coinsIn), coinsToTubes: try container.decode(Money.self, forKey: .coinsToTubes),
            billsIn: try container.decode(Money.self, forKey: .billsIn), dispensed: try container.decode(Money.self, forKey: .dispensed),
            manuallyDispensed: try container.decode(Money.self, forKey: .manuallyDispensed), filled: try container.decode(Money.self, forKey: .filled)
        )
        incidents = try container.decodeIfPresent([Incident: Int].self, forKey: .incidents) ?? [:]
        byList = try container.decodeIfPresent([PriceListSales: SalesFigure].self, forKey: .byList) ?? [:]
    }
}

extension SalesFigure {
    fileprivate func less(_ base: SalesFigure?) -> SalesFigure {
        guard let base else { return self }
        return SalesFigure(count: count - base.count, amount: amount - base.amount)
    }
}

extension Machine {
    /// The base of the interim figures: the last acknowledged audit's totals, or zero.
    public var interimBase: AuditTotals { lastAuditRead ?? .zero(setup.currency) }

    /// The figures since the last acknowledged DEX read.
    public var interimTotals: AuditTotals { AuditTotals(ledger).since(interimBase) }

    /// A handheld acknowledged the audit holding `totals`: they become the interim base. Totals
    /// this machine's ledger has not reached, or older than the base, are refused.
    mutating func recordAuditRead(_ totals: AuditTotals, into effects: inout Effects) {
        guard AuditTotals(ledger).covers(totals), totals.covers(interimBase) else {
            return effects.reject(.staleAuditRead)
        }
        lastAuditRead = totals
    }
}
