import VendConfig
import VendControl
import VendDrivers
import VendHardware
import VendingCore

extension StatusReport {
    /// `vendctl status`: the state and why, the credit, the hardware and its health, the books.
    /// `hardware` is nil while none is attached (between a failed reload and a restart).
    init(
        machine: Machine, config: VenddConfig, fault: String?, switches: ServiceModeSwitches,
        hardware: (gpio: String, coinAcceptor: String, simulated: Bool)?, payouts: PayoutBank?,
        health: StatusReport.Health, at now: Instant
    ) {
        let format = config.machine.moneyFormat
        let state: (String, String?)
        if let fault {
            state = ("out-of-order", fault)
        } else if machine.isInServiceMode {
            state = ("service-mode", switches.reasons.joined(separator: " and "))
        } else {
            state = ("in-service", nil)
        }
        let reports = Reports(
            machine: machine, format: format, machineName: config.machine.name,
            levelSensedCoins: payouts?.hasLevelSensedCoins ?? false, now: now, readers: config.cardReaders)
        self.init(
            machine: config.machine.name, state: state.0, stateReason: state.1,
            currency: config.machine.currency.code, credit: machine.credit.decimalString,
            creditText: format.string(for: machine.credit), acceptingCoins: fault == nil && machine.acceptsCoins,
            vendInProgress: machine.pendingVend.map { "\($0.id) at slot \($0.slot)" },
            simulated: hardware?.simulated ?? false, coinAcceptor: hardware?.coinAcceptor ?? "stopped",
            gpio: hardware?.gpio ?? "stopped", slots: reports.slots,
            books: Books(
                coinsIn: machine.ledger.coinsIn.decimalString, sales: machine.ledger.sales.decimalString,
                refunds: machine.ledger.refunds.decimalString,
                itemsSold: machine.ledger.salesByProduct.values.reduce(0) { $0 + $1.count },
                failedVends: machine.ledger.failedVends, unknownOutcomes: machine.ledger.unknownOutcomes,
                billsIn: machine.ledger.billsIn.decimalString, changePaid: machine.ledger.changePaid.decimalString,
                unknownPayouts: machine.ledger.unknownPayouts.decimalString),
            health: health, serviceKey: switches.serviceKeyOn, exactChangeOnly: machine.exactChangeOnly,
            payoutInProgress: machine.pendingPayout.map { "\($0.id) of \(format.string(for: $0.amount)) (\($0.reason.rawValue))" },
            payoutDevices: (payouts?.devices ?? []).map { device in
                // A level sensor is no count: a hopper below its low mark counts as empty for
                // exact change, yet holds some coins.
                let level = device.levelReading()
                return StatusReport.PayoutDevice(
                    description: device.description,
                    coins: device.inventory().map {
                        StatusReport.CoinLevel(
                            value: $0.value.decimalString, valueText: format.string(for: $0.value),
                            count: level == nil ? $0.count : nil, level: level?.rawValue)
                    })
            }, fillMode: machine.isFilling)
        let ledger = machine.ledger
        if !ledger.cardSales.isEmpty || !ledger.cardRefundsLost.isEmpty || !ledger.cardPossiblyCharged.isEmpty || ledger.freeCardVends > 0 {
            func byReader(_ figures: [CardReader: SalesFigure]) -> [String: String] {
                Dictionary(uniqueKeysWithValues: figures.map { (Payment.card($0.key).description, $0.value.amount.decimalString) })
            }
            books.cardSales = ledger.cardSales.isEmpty ? nil : byReader(ledger.cardSales)
            books.cardRefundsLost = ledger.cardRefundsLost.values.reduce(.zero(machine.setup.currency)) { $0 + $1.amount }.decimalString
            books.cardRefundsLostByReader = ledger.cardRefundsLost.isEmpty ? nil : byReader(ledger.cardRefundsLost)
            books.cardPossiblyCharged = ledger.cardPossiblyCharged.isEmpty ? nil : byReader(ledger.cardPossiblyCharged)
            books.freeCardVends = ledger.freeCardVends
        }
        if let discarded = machine.ledger.discardedTotal {
            books.discardedItems = discarded.count
            books.discardedValue = discarded.amount.decimalString
            books.discardedValueText = format.string(for: discarded.amount)
        }
        let toCheck = CardReader.allCases.flatMap { reader -> [String] in
            var lines: [String] = []
            if let lost = ledger.cardRefundsLost[reader] {
                lines.append(
                    "\(reader): \(format.string(for: lost.amount)) charged for \(lost.count) item(s) that did not come out, which it could not refund: refund the customers through the card provider"
                )
            }
            if let possibly = ledger.cardPossiblyCharged[reader] {
                lines.append(
                    "\(reader): \(format.string(for: possibly.amount)) possibly charged for \(possibly.count) vend(s) that dispensed nothing (reset or silent while it may have held an approval): check the card provider's settlement"
                )
            }
            return lines
        }
        cardMoneyToCheck = toCheck.isEmpty ? nil : toCheck
        cardVendAwaitingApproval = machine.pendingVend?.awaitsApproval == true ? true : nil
        ageCheck = machine.ageCheck.map {
            var check = AgeCheckState(slot: $0.slot.rawValue, age: $0.age, approved: $0.isApproved, until: $0.deadline.millisecondsSinceEpoch)
            check.atReader = config.ageVerification?.reader != nil ? true : nil
            return check
        }
        vendsStarted = machine.vendsStarted
        cashBox = reports.cashBox
        priceBand = reports.priceBand
        nextPriceChange = machine.setup.pricing.nextBandChange(after: now)?.millisecondsSinceEpoch
        cardSession = machine.cardSession.map { session in
            "\(Payment.card(session.reader)), funds \(session.funds.map(format.string(for:)) ?? "not told")"
        }
    }
}
