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
        health: StatusReport.Health
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
            levelSensedCoins: payouts?.hasLevelSensedCoins ?? false)
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
            health: health, serviceKey: switches.serviceKeyOn, exactChangeOnly: machine.needsExactChange,
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
        if !machine.ledger.cardSales.isEmpty || !machine.ledger.cardRefundsLost.isZero || machine.ledger.freeCardVends > 0 {
            books.cardSales = Dictionary(
                uniqueKeysWithValues: machine.ledger.cardSales.map { (Payment.card($0.key).description, $0.value.amount.decimalString) })
            books.cardRefundsLost = machine.ledger.cardRefundsLost.decimalString
            books.freeCardVends = machine.ledger.freeCardVends
        }
        if let discarded = machine.ledger.discardedTotal {
            books.discardedItems = discarded.count
            books.discardedValue = discarded.amount.decimalString
            books.discardedValueText = format.string(for: discarded.amount)
        }
        cardVendAwaitingApproval = machine.pendingVend?.awaitsApproval == true ? true : nil
        vendsStarted = machine.vendsStarted
        cardSession = machine.cardSession.map { session in
            "\(Payment.card(session.reader)), funds \(session.funds.map(format.string(for:)) ?? "not told")"
        }
    }
}
