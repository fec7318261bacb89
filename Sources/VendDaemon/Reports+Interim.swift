import VendControl
import VendingCore

extension Reports {
    /// The figures since the last DEX read a handheld acknowledged.
    var interim: SalesReport.Interim {
        let since = machine.interimTotals
        func figures(_ figure: SalesFigure) -> SalesFigures {
            SalesFigures(count: figure.count, amount: figure.amount.decimalString, amountText: format.string(for: figure.amount))
        }
        let slots = since.bySlot.filter { $0.value.count > 0 }.sorted { $0.key < $1.key }
            .map { SalesReport.Interim.Slot(slot: $0.key.rawValue, sold: figures($0.value)) }
        var interim = SalesReport.Interim(
            slots: slots, total: figures(since.sales), coinsIn: since.coinsIn.decimalString,
            cash: SalesReport.CashFigures(
                billsIn: since.billsIn.decimalString, coinsToTubes: since.coinsToTubes.decimalString,
                dispensed: since.dispensed.decimalString, manuallyDispensed: since.manuallyDispensed.decimalString,
                filled: since.filled.decimalString, tubeContents: nil))
        interim.byPayment = since.byPayment.mapValues(figures)
        return interim
    }
}
