import ArgumentParser
import VendControl
import VendText

struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Past sales, oldest first.",
        discussion: "The machine keeps the most recent machine.history_limit sales; totals per product are kept for ever (see report).")

    @OptionGroup var connection: Connection
    @Option(help: ArgumentHelp("Only sales at or after this moment.", valueName: "date"), transform: parseDate)
    var since: Int64?
    @Option(help: "Only the most recent N sales.") var limit: Int?

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        try reporting {
            try connection.show(.history(since: since, limit: limit), { $0.history }) { report in
                guard !report.sales.isEmpty else { return "no sales" + (report.since.map { " since \(dateText($0))" } ?? "") }
                var table = TextTable([.left, .right, .left, .left, .right, .left])
                table.add(["time", "vend", "slot", "product", "price", "confirmed by"])
                for sale in report.sales {
                    table.add([dateText(sale.at), "#\(sale.vend)", sale.slot, sale.productName, sale.priceText, sale.confirmation])
                }
                return table.render().joined(separator: "\n")
            }
        }
    }
}

struct Coins: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Coins in the cash box per denomination, since the machine was new.")

    @OptionGroup var connection: Connection

    func run() throws {
        try reporting {
            try connection.show(.coins, { $0.coins }) { report in
                var table = TextTable([.left, .right, .right])
                table.add(["coin", "count", "amount"])
                for coin in report.denominations { table.add([coin.valueText, "\(coin.count)", coin.amountText]) }
                table.add(["total", "\(report.count)", report.totalText])
                return table.render().joined(separator: "\n")
            }
        }
    }
}
