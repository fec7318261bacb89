import ArgumentParser
import VendControl

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
                return table(
                    [.left, .right, .left, .left, .right, .left, .left],
                    header: ["time", "vend", "slot", "product", "price", "paid", "confirmed by"],
                    rows: report.sales.map {
                        [dateText($0.at), "#\($0.vend)", $0.slot, $0.productName, $0.priceText, $0.payment ?? "", $0.confirmation]
                    })
            }
        }
    }
}

struct Coins: ParsableCommand {
    /// Where the coins went, when some went into a changer's tubes (change stock, not the cash
    /// box); nothing from older daemons, which do not say.
    static func destination(_ report: CoinsReport) -> String? {
        guard let tubes = report.details?.first(where: { $0.item == "coins-to-tubes" }),
            tubes.amount.contains(where: { $0 != "0" && $0 != "." })
        else { return nil }
        if tubes.amount == report.total { return "all of them went into the changer's tubes (change stock): none into the cash box" }
        return "of them, \(tubes.amountText) went into the changer's tubes (change stock), the rest into the cash box"
    }

    static let configuration = CommandConfiguration(
        abstract: "Coins customers put in per denomination since the machine was new, and where they went (the changer's tubes or the cash box).")

    @OptionGroup var connection: Connection

    func run() throws {
        try reporting {
            try connection.show(.coins, { $0.coins }) { report in
                table(
                    [.left, .right, .right], header: ["coin", "count", "amount"],
                    rows: report.denominations.map { [$0.valueText, "\($0.count)", $0.amountText] }
                        + [["total", "\(report.count)", report.totalText]])
                    + (Self.destination(report).map { "\n" + $0 } ?? "")
            }
        }
    }
}
