import FoundationEssentials
import VendTelemetry
import VendingCore

extension TelemetryEvent {
    /// The fleet's view of one machine event, with a fresh id; nil for what the fleet does not
    /// need (rejections, coin acceptance toggles, duplicates ignored).
    init?(_ event: MachineEvent, machine: String, currency: Currency, at: Instant) {
        func make(_ kind: Kind) -> TelemetryEvent {
            TelemetryEvent(
                id: UUID().uuidString.lowercased(), machine: machine, at: at.millisecondsSinceEpoch,
                type: kind, currency: currency.code)
        }
        switch event {
        case .coinCredited(let value, _):
            self = make(.coinCredited)
            amount = value.decimalString
        case .billCredited(let value, _):
            self = make(.billCredited)
            amount = value.decimalString
        case .creditChanged(_, let to):
            self = make(.creditChanged)
            credit = to.decimalString
        case .vendStarted(let id, let slot, let product, let price):
            self = make(.vendStarted)
            vend = id.rawValue
            self.slot = slot.rawValue
            self.product = product.rawValue
            amount = price.decimalString
        case .vendCompleted(let sale):
            self = make(.vendEnded)
            vend = sale.vend.rawValue
            slot = sale.slot.rawValue
            product = sale.product.rawValue
            amount = sale.price.decimalString
            outcome = "sold"
            reason = sale.confirmation.rawValue
            payment = sale.payment.description
        case .vendFailed(let id, let slot, let product, let outcome, let restored):
            self = make(.vendEnded)
            vend = id.rawValue
            self.slot = slot.rawValue
            self.product = product.rawValue
            self.outcome = outcome.rawValue
            credit = restored?.decimalString
        case .stockChanged(let slot, let product, _, let to, let why):
            self = make(.stockChanged)
            self.slot = slot.rawValue
            self.product = product.rawValue
            stock = to
            reason = why.rawValue
        case .paidOut(let value):
            self = make(.refund)
            amount = value.decimalString
        case .payoutStarted(let id, let value, let why):
            self = make(.payoutStarted)
            payout = id.rawValue
            amount = value.decimalString
            reason = why.rawValue
        case .payoutEnded(let id, let paid, let returned, let uncertain):
            self = make(.payoutEnded)
            payout = id.rawValue
            amount = paid.decimalString
            credit = returned.decimalString
            unknown = uncertain.decimalString
        case .testPayoutEnded(let id, let paid, _, let uncertain):
            self = make(.payoutEnded)
            payout = id.rawValue
            amount = paid.decimalString
            unknown = uncertain.decimalString
            reason = PayoutReason.test.rawValue
        case .fillModeChanged(let isOn):
            self = make(.fillMode)
            on = isOn
        case .floatAdded(let value, _):
            self = make(.floatAdded)
            amount = value.decimalString
        case .coinsDispensedManually(let value):
            self = make(.manualDispense)
            amount = value.decimalString
        case .cashCollected(let collected):
            self = make(.cashCollected)
            collection = collected.number
            amount = collected.total.decimalString
            since = collected.since?.millisecondsSinceEpoch
            coins = collected.coins.map { Denomination(value: $0.value.decimalString, count: $0.count) }
            bills = collected.bills.map { Denomination(value: $0.value.decimalString, count: $0.count) }
            reason = "collected by \(collected.by)"
        case .exactChangeOnlyChanged(let isOn):
            self = make(.exactChangeOnly)
            on = isOn
        case .priceChanged(let slot, _, let to):
            self = make(.priceChanged)
            self.slot = slot.rawValue
            amount = to.decimalString
        case .serviceModeChanged(let isOn):
            self = make(.serviceMode)
            on = isOn
        case .cardSessionBegan(let session):
            self = make(.cardSession)
            on = true
            payment = Payment.card(session.reader).description
            amount = session.funds?.decimalString
        case .cardSessionEnded(let reader):
            self = make(.cardSession)
            on = false
            payment = Payment.card(reader).description
        case .cardVendRequested(let id, let reader, let slot, let product, let price):
            self = make(.cardVend)
            vend = id.rawValue
            self.slot = slot.rawValue
            self.product = product.rawValue
            amount = price.decimalString
            payment = Payment.card(reader).description
            outcome = "requested"
        case .cardVendApproved(let id, let reader, let charged):
            self = make(.cardVend)
            vend = id.rawValue
            amount = charged.decimalString
            payment = Payment.card(reader).description
            outcome = "approved"
        case .cardVendDenied(let id, let reader, let slot, _):
            self = make(.cardVend)
            vend = id.rawValue
            self.slot = slot.rawValue
            payment = Payment.card(reader).description
            outcome = "denied"
        case .cardVendUnresolved(let id, let reader, let slot, let possibly):
            self = make(.cardVend)
            vend = id.rawValue
            self.slot = slot.rawValue
            amount = possibly.decimalString
            payment = Payment.card(reader).description
            outcome = "unknown"
        case .cardVendSettled(let settlement, let result):
            self = make(.cardVend)
            vend = settlement.vend.rawValue
            slot = settlement.slot.rawValue
            payment = Payment.card(settlement.reader).description
            switch result {
            case .asAsked:
                amount = settlement.amount.decimalString
                outcome = settlement.success ? "settled-sold" : "refunded"
            case .refundLost(let kept):
                amount = kept.decimalString
                outcome = "refund-lost"
            case .unknown(let possibly):
                amount = possibly.decimalString
                outcome = "unknown"
            }
        case .healthLocked(let lock):
            self = make(.healthLock)
            zone = lock.trip.zone.rawValue
            on = true
            reason = lock.trip.cause.description
        case .healthLockCleared(let lock, let technician):
            self = make(.healthLock)
            zone = lock.trip.zone.rawValue
            on = false
            reason = "serviced by \(technician)"
        case .slotFaulted(let slot, let fault):
            self = make(.slotFault)
            self.slot = slot.rawValue
            reason = fault.rawValue
            on = true
        case .slotFaultCleared(let slot, let fault, let technician):
            self = make(.slotFault)
            self.slot = slot.rawValue
            reason = "\(fault.rawValue) cleared by \(technician)"
            on = false
        case .stockExpired(let expired):
            self = make(.stockExpired)
            slot = expired.slot.rawValue
            product = expired.product.rawValue
            count = expired.count
            since = expired.since.millisecondsSinceEpoch
            on = true
        case .expiredStockCleared(let slot, let product):
            self = make(.stockExpired)
            self.slot = slot.rawValue
            self.product = product.rawValue
            on = false
        case .ageCheckStarted(let check), .ageCheckApproved(let check), .ageCheckEnded(let check, _):
            self = make(.ageCheck)
            slot = check.slot.rawValue
            count = check.age
            reason =
                switch event {
                case .ageCheckStarted: "started"
                case .ageCheckApproved: "approved"
                case .ageCheckEnded(_, let end): end.rawValue
                default: nil
                }
        case .expiredStockDiscarded(let slot, let product, let discarded, let value):
            self = make(.stockDiscarded)
            self.slot = slot.rawValue
            self.product = product.rawValue
            count = discarded
            amount = value.decimalString
        // A slot's list-1 price has its event (`price-changed`); its other lines, and a reload's
        // lists and bands, reach the fleet in the retained stock (`changesRetainedOnly`).
        case .duplicateCoinIgnored, .coinAcceptanceChanged, .cardAcceptanceChanged, .setupChanged, .rejected, .capacityBelowStock,
            .priceLineChanged:
            return nil
        }
    }
}

extension MachineEvent {
    /// A change the retained `stock` message shows that has no fleet event to wake its
    /// publisher: a price line set at run time, a new setup (its lists, bands and prices).
    var changesRetainedOnly: Bool {
        switch self {
        case .priceLineChanged, .setupChanged: true
        default: false
        }
    }
}
