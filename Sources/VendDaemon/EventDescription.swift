import Logging
import VendingCore

/// How a machine event reads in the journal and in `vendctl watch`: a sentence, a level, and
/// the structured fields that make `journalctl -u vendd SLOT=A1` work.
struct EventDescription {
    let kind: String
    let text: String
    let level: Logger.Level
    let fields: Logger.Metadata

    init(_ event: MachineEvent, format: MoneyFormat) {
        func money(_ amount: Money) -> String { format.string(for: amount) }
        switch event {
        case .coinCredited(let value, let source):
            self.init(
                "coin", "coin of \(money(value)) credited", .info,
                ["AMOUNT": "\(value.decimalString)", "COIN_EVENT": "\(source)"])
        case .billCredited(let value, let source):
            self.init(
                "bill", "bill of \(money(value)) stacked and credited", .info,
                ["AMOUNT": "\(value.decimalString)", "COIN_EVENT": "\(source)"])
        case .duplicateCoinIgnored(let source):
            self.init("coin-duplicate", "coin event \(source) was credited before; ignored", .warning, ["COIN_EVENT": "\(source)"])
        case .creditChanged(let from, let to):
            self.init("credit", "credit \(money(from)) → \(money(to))", .info, ["CREDIT": "\(to.decimalString)"])
        case .vendStarted(let vend, let slot, let product, let price):
            self.init(
                "vend-started", "\(vend) started: slot \(slot), \(product) for \(money(price))", .info,
                ["VEND": "\(vend.rawValue)", "SLOT": "\(slot)", "PRODUCT": "\(product)", "AMOUNT": "\(price.decimalString)"])
        case .vendCompleted(let sale):
            self.init(
                "vend-completed",
                "\(sale.vend) sold \(sale.product) from slot \(sale.slot) for \(money(sale.price)) (\(sale.confirmation.rawValue), \(sale.payment)"
                    + (sale.priceList == .standardList ? ")" : ", price list \(sale.priceList))"),
                sale.confirmation == .assumed ? .warning : .notice,
                [
                    "VEND": "\(sale.vend.rawValue)", "SLOT": "\(sale.slot)", "PRODUCT": "\(sale.product)",
                    "AMOUNT": "\(sale.price.decimalString)", "CONFIRMATION": "\(sale.confirmation.rawValue)", "PAYMENT": "\(sale.payment)",
                    "PRICE_LIST": "\(sale.priceList)",
                ])
        case .vendFailed(let vend, let slot, let product, let outcome, let restored):
            let money = restored.map { "\(money($0)) back to credit" } ?? "paid by card, nothing goes back to credit (the reader is told)"
            // A card vend given up unknown never moved a relay (or its approval was never seen).
            let jam = restored == nil && outcome == .unknown ? "" : "; check the slot for a jam"
            self.init(
                "vend-failed", "\(vend) at slot \(slot) failed (\(outcome.rawValue)): \(money)\(jam)",
                .warning, ["VEND": "\(vend.rawValue)", "SLOT": "\(slot)", "PRODUCT": "\(product)", "OUTCOME": "\(outcome.rawValue)"])
        case .slotFaulted(let slot, let fault):
            self.init(
                "slot-fault",
                "slot \(slot) out of service (\(fault.rawValue)): free the spiral, turn it home, then vendctl slot clear \(slot) in service mode",
                .error, ["SLOT": "\(slot)", "FAULT": "\(fault.rawValue)"])
        case .slotFaultCleared(let slot, let fault, let technician):
            self.init(
                "slot-fault-cleared", "slot \(slot) back in service (\(fault.rawValue) cleared by \(technician))", .notice,
                ["SLOT": "\(slot)", "FAULT": "\(fault.rawValue)", "TECHNICIAN": "\(technician)"])
        case .stockExpired(let expired):
            self.init(
                "stock-expired",
                "slot \(expired.slot) (\(expired.product)) stopped selling: \(expired.count) item(s) past their shelf life; a technician must unload them (vendctl unload \(expired.slot))",
                .error,
                [
                    "SLOT": "\(expired.slot)", "PRODUCT": "\(expired.product)", "EXPIRED": "\(expired.count)",
                    "SINCE_MS": "\(expired.since.millisecondsSinceEpoch)",
                ])
        case .capacityBelowStock(let slot, let stock, let capacity):
            self.init(
                "capacity-lowered",
                "slot \(slot) holds \(stock) items, above its new capacity of \(capacity): they stay and sell; restock adds nothing until it holds fewer than \(capacity)",
                .warning, ["SLOT": "\(slot)", "STOCK": "\(stock)", "CAPACITY": "\(capacity)"])
        case .expiredStockCleared(let slot, let product):
            self.init(
                "stock-expired-cleared", "slot \(slot) (\(product)) sells again: its next item is within its shelf life", .notice,
                ["SLOT": "\(slot)", "PRODUCT": "\(product)"])
        case .ageCheckStarted(let check):
            self.init(
                "age-check", "slot \(check.slot): age check (\(check.age)+) started; waiting for the verifier until \(check.deadline)",
                .notice, ["SLOT": "\(check.slot)", "AGE": "\(check.age)", "RESULT": "started"])
        case .ageCheckApproved(let check):
            self.init(
                "age-check", "slot \(check.slot): age (\(check.age)+) verified; the approval holds until \(check.deadline)", .notice,
                ["SLOT": "\(check.slot)", "AGE": "\(check.age)", "RESULT": "approved"])
        case .ageCheckEnded(let check, let reason):
            self.init(
                reason == .used ? "age-check-used" : "age-check-ended",
                "slot \(check.slot): age check (\(check.age)+) ended: \(reason.rawValue); no money moved on it",
                reason == .used ? .info : .notice, ["SLOT": "\(check.slot)", "AGE": "\(check.age)", "RESULT": "\(reason.rawValue)"])
        case .expiredStockDiscarded(let slot, let product, let count, let value):
            self.init(
                "stock-discarded", "slot \(slot) (\(product)): \(count) expired item(s) discarded, worth \(money(value)) at the slot's price",
                .notice,
                ["SLOT": "\(slot)", "PRODUCT": "\(product)", "DISCARDED": "\(count)", "AMOUNT": "\(value.decimalString)"])
        case .stockChanged(let slot, let product, let from, let to, let reason):
            self.init(
                "stock", "slot \(slot) (\(product)): \(from) → \(to) items (\(reason.rawValue))",
                reason == .slotReconfigured ? .warning : .info,
                ["SLOT": "\(slot)", "PRODUCT": "\(product)", "STOCK": "\(to)", "REASON": "\(reason.rawValue)"])
        case .paidOut(let amount):
            self.init("payout", "refund of \(money(amount)): pay the customer", .notice, ["AMOUNT": "\(amount.decimalString)"])
        case .payoutStarted(let payout, let amount, let reason):
            self.init(
                "payout-started", "\(payout): paying \(money(amount)) (\(reason.rawValue))", .info,
                ["PAYOUT": "\(payout.rawValue)", "AMOUNT": "\(amount.decimalString)", "REASON": "\(reason.rawValue)"])
        case .payoutEnded(let payout, let paid, let rest, let unknown):
            let short = rest.isZero ? "" : "; \(money(rest)) was not paid and went back to credit (check and refill the payout devices)"
            let lost = unknown.isZero ? "" : "; \(money(unknown)) may or may not have been paid: count the payout devices to settle it"
            self.init(
                "payout-ended", "\(payout) paid \(money(paid))" + short + lost,
                unknown.isZero ? (rest.isZero ? .info : .warning) : .critical,
                [
                    "PAYOUT": "\(payout.rawValue)", "AMOUNT": "\(paid.decimalString)",
                    "UNPAID": "\(rest.decimalString)", "UNKNOWN": "\(unknown.decimalString)",
                ])
        case .testPayoutEnded(let payout, let paid, let unpaid, let unknown):
            let short = unpaid.isZero ? "" : "; \(money(unpaid)) was not paid (the devices ran short or jammed)"
            let lost = unknown.isZero ? "" : "; \(money(unknown)) may or may not have been paid: count the payout devices"
            self.init(
                "payout-test-ended", "payout test \(payout) paid \(money(paid))" + short + lost,
                unknown.isZero ? (unpaid.isZero ? .notice : .warning) : .critical,
                [
                    "PAYOUT": "\(payout.rawValue)", "AMOUNT": "\(paid.decimalString)", "REASON": "test",
                    "UNPAID": "\(unpaid.decimalString)", "UNKNOWN": "\(unknown.decimalString)",
                ])
        case .fillModeChanged(let on):
            self.init(
                "fill-mode",
                on
                    ? "fill mode on: coins put in now are float for the change stock, not credit"
                    : "fill mode off", .notice, [:])
        case .floatAdded(let value, let source):
            self.init(
                "float", "float of \(money(value)) added", .info,
                ["AMOUNT": "\(value.decimalString)", "COIN_EVENT": "\(source)"])
        case .coinsDispensedManually(let amount):
            self.init(
                "manual-dispense", "\(money(amount)) paid out by the changer's own buttons", .notice,
                ["AMOUNT": "\(amount.decimalString)"])
        case .cashCollected(let collected):
            let counted = (collected.coins + collected.bills).map { "\($0.count) × \(money($0.value))" }
            self.init(
                "cash-collected",
                "cash box collected (collection #\(collected.number)) by \(collected.by): \(money(collected.total))"
                    + (counted.isEmpty ? ", it took nothing since the last collection" : " (\(counted.joined(separator: ", ")))"),
                .notice,
                ["COLLECTION": "\(collected.number)", "AMOUNT": "\(collected.total.decimalString)"])
        case .exactChangeOnlyChanged(let exact):
            self.init(
                "exact-change",
                exact
                    ? "exact change only: the payout devices cannot make change for every sale"
                    : "change available again", .notice, [:])
        case .priceChanged(let slot, let from, let to):
            self.init(
                "price", "slot \(slot) price \(money(from)) → \(money(to))", .notice,
                ["SLOT": "\(slot)", "AMOUNT": "\(to.decimalString)"])
        case .priceLineChanged(let slot, let list, let scope, let from, let to):
            self.init(
                "price", "slot \(slot) price on list \(list) for \(scope.rawValue) \(from.map(money) ?? "none") → \(to.map(money) ?? "none")",
                .notice, ["SLOT": "\(slot)", "LIST": "\(list)", "PAYMENT": "\(scope.rawValue)", "AMOUNT": "\(to?.decimalString ?? "default")"])
        case .serviceModeChanged(let on):
            self.init("service-mode", on ? "service mode on: sales stopped" : "service mode off: back in service", .notice, [:])
        case .coinAcceptanceChanged(let accepting):
            self.init("coin-acceptance", accepting ? "coin acceptance enabled" : "coin acceptance inhibited", .info, [:])
        case .setupChanged(let added, let removed):
            let detail = [
                added.isEmpty ? nil : "added slots \(added.map(\.rawValue).joined(separator: ", "))",
                removed.isEmpty ? nil : "removed slots \(removed.map(\.rawValue).joined(separator: ", "))",
            ]
            .compactMap { $0 }.joined(separator: "; ")
            self.init("setup", "configuration applied" + (detail.isEmpty ? "" : ": \(detail)"), .notice, [:])
        case .rejected(let reason):
            self.init("rejected", "refused: \(reason.describe(format))", .info, [:])
        case .cardSessionBegan(let session):
            self.init(
                "card-session",
                "\(session.reader): card presented (\(session.media.rawValue), \(session.terms)), funds \(session.funds.map(money) ?? "not told")",
                .info,
                ["CASHLESS": "\(session.reader.rawValue)", "SESSION": "began", "AMOUNT": session.funds.map { "\($0.decimalString)" } ?? "unknown"])
        case .cardSessionEnded(let reader):
            self.init("card-session", "\(reader): session ended", .info, ["CASHLESS": "\(reader.rawValue)", "SESSION": "ended"])
        case .cardVendRequested(let vend, let reader, let slot, let product, let price):
            self.init(
                "card-vend", "\(vend): slot \(slot), \(product) for \(money(price)) by card on \(reader): waiting for the approval", .info,
                [
                    "CASHLESS": "\(reader.rawValue)", "VEND": "\(vend.rawValue)", "SLOT": "\(slot)", "AMOUNT": "\(price.decimalString)",
                    "RESULT": "requested",
                ])
        case .cardVendApproved(let vend, let reader, let amount):
            self.init(
                "card-vend", "\(vend) approved by \(reader) for \(money(amount)): dispensing", .notice,
                ["CASHLESS": "\(reader.rawValue)", "VEND": "\(vend.rawValue)", "AMOUNT": "\(amount.decimalString)", "RESULT": "approved"])
        case .cardVendDenied(let vend, let reader, let slot, let byReader):
            let why = byReader ? "denied by \(reader)" : "not sent to \(reader), which could not take a vend then"
            self.init(
                "card-denied", "\(vend) at slot \(slot) \(why): nothing charged, nothing dispensed", .notice,
                ["CASHLESS": "\(reader.rawValue)", "VEND": "\(vend.rawValue)", "SLOT": "\(slot)", "RESULT": "denied"])
        case .cardVendUnresolved(let vend, let reader, let slot, let amount):
            self.init(
                "card-settled",
                "\(vend) at slot \(slot): \(reader) was reset or stopped answering while the vend awaited its approval: it may have charged \(money(amount)), nothing was dispensed; booked as possibly charged: check the card provider's settlement and refund the customer if it was charged",
                .error,
                [
                    "CASHLESS": "\(reader.rawValue)", "VEND": "\(vend.rawValue)", "SLOT": "\(slot)", "AMOUNT": "\(amount.decimalString)",
                    "RESULT": "unknown",
                ])
        case .cardVendSettled(let settlement, let result):
            let description = CardSettlementDescription(settlement, result, money: money)
            self.init(
                "card-settled", description.text, description.level,
                [
                    "CASHLESS": "\(settlement.reader.rawValue)", "VEND": "\(settlement.vend.rawValue)", "SLOT": "\(settlement.slot)",
                    "AMOUNT": "\(description.amount.decimalString)", "RESULT": "\(description.result)",
                    "APPROVED": "\(settlement.amount.decimalString)",
                ])
        case .cardAcceptanceChanged(let accepting):
            self.init("card-acceptance", accepting ? "card readers enabled" : "card readers disabled", .info, [:])
        case .healthLocked(let lock):
            let trip = lock.trip
            let worst = trip.worst.map { ", worst \($0)" } ?? ""
            self.init(
                "health-lock",
                "zone \(trip.zone) locked: \(trip.cause)\(worst); its perishable slots are out of sale until a technician services it (vendctl zone service \(trip.zone))",
                .critical,
                [
                    "ZONE": "\(trip.zone)", "HEALTH": "locked", "REASON": "\(trip.cause)", "SINCE_MS": "\(trip.since.millisecondsSinceEpoch)",
                    "TEMPERATURE": "\(trip.worst?.decimalCelsius ?? "none")",
                ])
        case .healthLockCleared(let lock, let technician):
            self.init(
                "health-lock", "zone \(lock.trip.zone) serviced by \(technician): its perishable slots sell again", .notice,
                ["ZONE": "\(lock.trip.zone)", "HEALTH": "serviced", "TECHNICIAN": "\(technician)"])
        }
    }

    private init(_ kind: String, _ text: String, _ level: Logger.Level, _ fields: Logger.Metadata) {
        self.kind = kind
        self.text = text
        self.level = level
        self.fields = fields
    }
}

extension Rejection {
    /// The rejection as a customer-facing sentence, with amounts in the machine's format.
    func describe(_ format: MoneyFormat) -> String {
        switch self {
        case .insufficientCredit(let slot, let price, let credit):
            "slot \(slot) costs \(format.string(for: price)); credit is \(format.string(for: credit))"
        case .payoutUnavailable(let credit):
            "this machine gives no change; the credit of \(format.string(for: credit)) stays for a purchase"
        case .insufficientFunds(let slot, let price, let funds):
            "slot \(slot) costs \(format.string(for: price)); the card has \(format.string(for: funds))"
        case .priceRefused(let slot, let price, let problem): "slot \(slot): \(problem.describe(price, format: format))"
        default:
            description
        }
    }
}

/// A card settlement in words: what the reader was told and what it did, with the amount that
/// matters (charged, refunded, kept, or possibly charged).
private struct CardSettlementDescription {
    let text: String
    let level: Logger.Level
    let amount: Money
    /// The journal's and the watch's RESULT: success, failure, refund-lost, unknown.
    let result: String

    init(_ settlement: CardSettlement, _ result: CardSettlementResult, money: (Money) -> String) {
        let vend = settlement.vend
        let reader = settlement.reader
        switch result {
        case .asAsked where settlement.success:
            text = "\(vend): \(reader) told VEND SUCCESS (\(money(settlement.amount)) charged)"
            (level, amount, self.result) = (.notice, settlement.amount, "success")
        case .asAsked where settlement.amount.isZero:
            text = "\(vend): \(reader) never approved it: nothing charged, nothing dispensed"
            (level, amount, self.result) = (.notice, settlement.amount, "failure")
        case .asAsked:
            text = "\(vend): \(reader) told VEND FAILURE: the card is refunded \(money(settlement.amount))"
            (level, amount, self.result) = (.notice, settlement.amount, "failure")
        case .refundLost(let kept):
            text =
                "\(vend): the card stays charged \(money(kept)) for an item that did not come out (\(reader) could not refund it): refund the customer through the card provider"
            (level, amount, self.result) = (.critical, kept, "refund-lost")
        case .unknown(let possibly):
            text =
                "\(vend): \(reader) may have charged \(money(possibly)) for an item that did not come out (it was reset or did not answer while it may have held an approval): booked as possibly charged; check the card provider's settlement and refund the customer if it was charged"
            (level, amount, self.result) = (.error, possibly, "unknown")
        }
    }
}
