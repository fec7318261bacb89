/// A broken rule found in a machine's state: restored state that breaks one is corrupt.
public struct IntegrityProblem: Hashable, Sendable, CustomStringConvertible {
    public let description: String
}

extension Machine {
    /// Checks the rules every reachable state keeps. `apply` never breaks them; a state restored
    /// from disk is only trusted if it keeps them too.
    public var integrityProblems: [IntegrityProblem] {
        var problems: [String] = []
        let currency = setup.currency
        let held = pendingVend?.heldCredit ?? .zero(currency)
        let paying = heldByPayout
        let amounts = [
            credit, held, paying, ledger.coinsIn, ledger.billsIn, ledger.sales, ledger.refunds,
            ledger.changePaid, ledger.unknownPayouts, ledger.coinsToTubes, ledger.dispensed, ledger.floatFilled,
            ledger.testPayouts, ledger.unknownTestPayouts, ledger.manuallyDispensed,
        ]
        if amounts.contains(where: { $0.currency != currency }) {
            problems.append("amounts are not all in \(currency)")
        } else {
            if credit.isNegative { problems.append("credit is negative (\(credit))") }
            let accounted = ledger.sales + ledger.changePaid + ledger.refunds + ledger.unknownPayouts + credit + held + paying
            if ledger.moneyIn != accounted {
                problems.append(
                    ledger.billsIn.isZero && ledger.changePaid.isZero && ledger.unknownPayouts.isZero && paying.isZero
                        ? "coins in (\(ledger.coinsIn)) differ from sales + refunds + credit + held (\(accounted))"
                        : "coins and bills in (\(ledger.moneyIn)) differ from sales + change + refunds + unknown payouts + credit + held (\(accounted))"
                )
            }
            let cashboxTotal = ledger.cashbox.reduce(Money.zero(currency)) { $0 + $1.value * $1.count }
            if cashboxTotal != ledger.coinsIn {
                problems.append("cash box counters (\(cashboxTotal)) differ from coins in (\(ledger.coinsIn))")
            }
            if ledger.coinsToTubes > ledger.coinsIn {
                problems.append("coins to the tubes (\(ledger.coinsToTubes)) exceed coins in (\(ledger.coinsIn))")
            }
            if ledger.dispensed > ledger.changePaid + ledger.refunds {
                problems.append("paid by the devices (\(ledger.dispensed)) exceeds change and refunds (\(ledger.changePaid + ledger.refunds))")
            }
            if isFilling && !isInServiceMode { problems.append("fill mode is on outside service mode") }
            let stackerTotal = ledger.stacker.reduce(Money.zero(currency)) { $0 + $1.value * $1.count }
            if stackerTotal != ledger.billsIn {
                problems.append("stacker counters (\(stackerTotal)) differ from bills in (\(ledger.billsIn))")
            }
        }
        for slot in setup.slots {
            guard let slotStock = stock[slot.id] else {
                problems.append("slot \(slot.id) has no stock record")
                continue
            }
            if slotStock.lots.contains(where: { $0.count <= 0 }) {
                problems.append("slot \(slot.id) has a lot with no items")
            }
        }
        for slot in stock.keys where setup.slot(slot) == nil {
            problems.append("stock recorded for unconfigured slot \(slot)")
        }
        if let pendingVend {
            if setup.slot(pendingVend.slot) == nil {
                problems.append("\(pendingVend.id) is for unconfigured slot \(pendingVend.slot)")
            } else if (stock[pendingVend.slot]?.count ?? 0) < 1 {
                problems.append("\(pendingVend.id) reserved an item that slot \(pendingVend.slot) does not hold")
            }
        }
        return problems.map(IntegrityProblem.init)
    }
}
