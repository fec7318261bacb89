/// The whole-life figures an EVA-DTS audit reports, taken from the ledger at one instant. The
/// figures a DEX read resets ("since last reset", the interim figures) are the ledger's now
/// minus the totals of the last audit a handheld acknowledged: the ledger itself is never
/// reset, so a read that fails halfway loses nothing, and sales made while the audit was on
/// the wire count in the next read, not in none or both.
public struct AuditTotals: Hashable, Sendable, Codable {
    public var bySlot: [SlotID: SalesFigure]
    public var sales: SalesFigure
    public var coinsIn: Money
    public var coinsToTubes: Money
    public var billsIn: Money
    /// What the payout devices paid to customers (change, refunds).
    public var dispensed: Money
    /// Payout tests and a changer's own buttons.
    public var manuallyDispensed: Money
    public var filled: Money

    /// Nothing yet: the base of the interim figures of a machine never read.
    public static func zero(_ currency: Currency) -> AuditTotals {
        let zero = Money.zero(currency)
        return AuditTotals(
            bySlot: [:], sales: .zero(currency), coinsIn: zero, coinsToTubes: zero, billsIn: zero, dispensed: zero,
            manuallyDispensed: zero, filled: zero)
    }

    public init(
        bySlot: [SlotID: SalesFigure], sales: SalesFigure, coinsIn: Money, coinsToTubes: Money, billsIn: Money, dispensed: Money,
        manuallyDispensed: Money, filled: Money
    ) {
        self.bySlot = bySlot
        self.sales = sales
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
        self.init(
            bySlot: ledger.salesBySlot, sales: sales, coinsIn: ledger.coinsIn, coinsToTubes: ledger.coinsToTubes, billsIn: ledger.billsIn,
            dispensed: ledger.dispensed, manuallyDispensed: ledger.testPayouts + ledger.manuallyDispensed, filled: ledger.floatFilled)
    }

    /// These figures less `base`, figure by figure.
    public func since(_ base: AuditTotals) -> AuditTotals {
        var bySlot: [SlotID: SalesFigure] = [:]
        for (slot, figure) in self.bySlot { bySlot[slot] = figure.less(base.bySlot[slot]) }
        return AuditTotals(
            bySlot: bySlot, sales: sales.less(base.sales), coinsIn: coinsIn - base.coinsIn, coinsToTubes: coinsToTubes - base.coinsToTubes,
            billsIn: billsIn - base.billsIn, dispensed: dispensed - base.dispensed,
            manuallyDispensed: manuallyDispensed - base.manuallyDispensed, filled: filled - base.filled)
    }

    /// No figure is below its counterpart in `base`: these totals can follow `base`.
    public func covers(_ base: AuditTotals) -> Bool {
        sales.count >= base.sales.count && sales.amount >= base.sales.amount && coinsIn >= base.coinsIn
            && coinsToTubes >= base.coinsToTubes && billsIn >= base.billsIn && dispensed >= base.dispensed
            && manuallyDispensed >= base.manuallyDispensed && filled >= base.filled
            && base.bySlot.allSatisfy { slot, figure in
                (bySlot[slot]?.count ?? 0) >= figure.count && (bySlot[slot]?.amount ?? .zero(figure.amount.currency)) >= figure.amount
            }
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
