import VendDEX
import VendingCore

/// An amount in a sales report that does not parse in the report's own currency.
public struct UnreadableAmount: Error, CustomStringConvertible {
    public let description: String
}

extension DEXAudit {
    /// The EVA-DTS audit of a sales report: `vendctl audit` writes it to a file, vendd's `dex`
    /// fleet command sends it to the operator.
    /// Event dates are local time by `secondsEast` (the system's time zone unless a test says).
    public init(
        _ sales: SalesReport, communicationID: String, asset: String,
        secondsEast: (Int64) -> Int = SalesReport.localSecondsEast
    ) throws(UnreadableAmount) {
        let currency = Currency(code: sales.currency, minorDigits: sales.minorDigits)
        func minorUnits(_ amount: String) throws(UnreadableAmount) -> Int64 {
            do {
                return try Money(parsing: amount, currency: currency).minorUnits
            } catch {
                throw UnreadableAmount(description: "vendd sent an amount this program cannot read: \(error)")
            }
        }
        var selections: [DEXAudit.Selection] = []
        for slot in sales.slots {
            selections.append(
                DEXAudit.Selection(
                    id: slot.slot, price: try slot.price.map { amount throws(UnreadableAmount) in try minorUnits(amount) },
                    vends: slot.sold.count, value: try minorUnits(slot.sold.amount)))
        }
        func cash(_ coinsIn: String, _ figures: SalesReport.CashFigures?) throws(UnreadableAmount) -> DEXAudit.Cash {
            let coins = try minorUnits(coinsIn)
            guard let figures else { return DEXAudit.Cash(coinsIn: coins) }
            return DEXAudit.Cash(
                coinsIn: coins, coinsToTubes: try minorUnits(figures.coinsToTubes), billsIn: try minorUnits(figures.billsIn),
                dispensed: try minorUnits(figures.dispensed), manuallyDispensed: try minorUnits(figures.manuallyDispensed),
                filled: try minorUnits(figures.filled),
                tubeContents: try figures.tubeContents.map { amount throws(UnreadableAmount) in try minorUnits(amount) })
        }
        self.init(
            communicationID: communicationID, assetNumber: asset, location: sales.machine, decimalPlaces: sales.minorDigits,
            currencyCode: sales.currency, selections: selections, cash: try cash(sales.coinsIn, sales.cash))
        func split(_ figures: [String: SalesFigures]?) throws(UnreadableAmount) -> [String: DEXAudit.Sales] {
            var split: [String: DEXAudit.Sales] = [:]
            for (payment, figure) in figures ?? [:] { split[payment] = DEXAudit.Sales(vends: figure.count, value: try minorUnits(figure.amount)) }
            return split
        }
        byPayment = try split(sales.byPayment)
        if let interim = sales.sinceLastRead {
            var sold: [DEXAudit.Selection] = []
            for slot in interim.slots {
                sold.append(DEXAudit.Selection(id: slot.slot, price: nil, vends: slot.sold.count, value: try minorUnits(slot.sold.amount)))
            }
            sinceReset = DEXAudit.Interim(selections: sold, cash: try cash(interim.coinsIn, interim.cash), byPayment: try split(interim.byPayment))
        }
        for line in sales.priceLists ?? [] {
            guard let device = DEXAudit.ListSales.device(of: line.payment) else { continue }
            priceLists[line.slot, default: []].append(
                DEXAudit.ListSales(
                    device: device, list: line.list, price: try line.price.map { amount throws(UnreadableAmount) in try minorUnits(amount) },
                    total: DEXAudit.Sales(vends: line.sold.count, value: try minorUnits(line.sold.amount)),
                    sinceReset: DEXAudit.Sales(vends: line.soldSinceLastRead.count, value: try minorUnits(line.soldSinceLastRead.amount))))
        }
        devices = Set((sales.devices ?? []).compactMap(DEXAudit.Device.init(rawValue:)))
        if let dex = sales.dexReads {
            reads.reads = dex.reads
            reads.readsWithReset = dex.readsWithReset
            reads.resets = dex.resets
            reads.now = dex.at
            reads.nowSecondsEast = secondsEast(dex.at)
            if let at = dex.lastReadAt {
                reads.last = DEXAudit.Reads.Read(at: at, secondsEast: secondsEast(at), terminal: dex.lastTerminal ?? "")
            }
        }
        events = (sales.events ?? []).map { event in
            DEXAudit.Event(
                code: event.code, startedAt: event.startedAt, secondsEast: secondsEast(event.startedAt), durationMinutes: event.durationMinutes,
                sinceReset: event.sinceLastRead, sinceInitialisation: event.occurrences, active: event.active)
        }
    }
}
