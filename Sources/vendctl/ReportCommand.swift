import ArgumentParser
import VendControl
import VendPOSIX
import VendReports
import VendText

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sales by product as a bar chart, and optionally as an SVG pie chart.",
        discussion:
            "Bars and slices are proportional to the number of items sold. Without --since the totals are exact since the machine was new; with it they come from the kept sales history."
    )

    @OptionGroup var connection: Connection
    @Option(help: ArgumentHelp("Only sales at or after this moment.", valueName: "date"), transform: parseDate)
    var since: Int64?
    @Option(help: ArgumentHelp("Also write the pie chart to this SVG file.", valueName: "file"))
    var svg: String?
    @Flag(help: "Sales by price list and payment (and per slot) instead: the DEX audit's PA7 figures, since the machine was new.")
    var byList = false

    static let barWidth = 30

    func validate() throws {
        if byList && since != nil {
            throw ValidationError("--by-list reports whole-life totals (the DEX audit's PA7): leave out --since")
        }
        if byList && svg != nil { throw ValidationError("--by-list is a table: leave out --svg") }
    }

    func run() throws {
        try reporting {
            let response = try connection.send(.sales(since: since))
            guard let sales = response.sales else {
                throw Failure("vendd's answer lacks the sales; is vendd older than this vendctl?", code: ExitStatus.unavailable)
            }
            if sales.incomplete {
                StandardError.write(
                    "vendctl: note: the history keeps only the last sales; older ones before \(dateText(since)) are missing here (without --since the totals are complete)\n"
                )
            }
            if byList {
                if !connection.json { print(Self.renderByList(sales)) }
                return
            }
            if let svg { try write(Self.pieChart(sales).svg, to: svg) }
            if !connection.json { print(Self.render(sales)) }
            if let svg, !connection.json { print("pie chart written to \(svg)") }
        }
    }

    static func title(_ sales: SalesReport) -> String {
        "Sales by product, \(sales.since.map { "since \(dateText($0))" } ?? "all time") — \(sales.machine)"
    }

    static func render(_ sales: SalesReport) -> String {
        guard !sales.products.isEmpty else { return title(sales) + "\nno sales" }
        let most = sales.products.map(\.sold.count).max() ?? 0
        var table = TextTable([.left, .left, .right, .right])
        for product in sales.products {
            table.add([
                product.name, BarChart.bar(product.sold.count, maximum: most, width: barWidth),
                "\(product.sold.count)", product.sold.amountText,
            ])
        }
        table.add(["total", "", "\(sales.total.count)", sales.total.amountText])
        return ([title(sales)] + table.render()).joined(separator: "\n")
    }

    /// Each list and payment's sales, then its slots' lines: what was sold at which list's price.
    static func renderByList(_ sales: SalesReport) -> String {
        let title = "Sales by price list and payment, all time — \(sales.machine)"
        guard let lines = sales.priceLists else {
            return title + "\nthis machine has one price per slot (no pricing: or prices: in its file): every sale is list 1's"
        }
        guard !lines.isEmpty else { return title + "\nno sales" }
        let groups = Dictionary(grouping: lines) { PriceGroup(list: $0.list, payment: $0.payment) }
        var table = TextTable([.right, .left, .left, .right, .right, .right, .right])
        table.add(["list", "payment", "slot", "price now", "sold", "amount", "since read"])
        for group in groups.keys.sorted() {
            let slots = groups[group, default: []].sorted { $0.slot < $1.slot }
            table.add(["\(group.list)", group.payment, "all", "", "\(slots.reduce(0) { $0 + $1.sold.count })", "", ""])
            for line in slots {
                table.add([
                    "", "", line.slot, line.price ?? "-", "\(line.sold.count)", line.sold.amountText,
                    "\(line.soldSinceLastRead.count) (\(line.soldSinceLastRead.amountText))",
                ])
            }
        }
        return ([title] + table.render()).joined(separator: "\n")
    }

    private struct PriceGroup: Hashable, Comparable {
        let list: Int
        let payment: String

        static func < (left: Self, right: Self) -> Bool { (left.list, left.payment) < (right.list, right.payment) }
    }

    static func pieChart(_ sales: SalesReport) -> PieChart {
        PieChart(
            title: title(sales),
            slices: sales.products.map {
                PieChart.Slice(label: $0.name, value: $0.sold.count, detail: "\($0.sold.count) sold, \($0.sold.amountText)")
            }, total: "total: \(sales.total.count) items sold, \(sales.total.amountText)")
    }
}

/// Writes a file for the technician, failing with a message that names it.
func write(_ text: String, to path: String) throws {
    do {
        try TextFile.write(text, to: path)
    } catch {
        throw Failure("cannot write \(path): \(error.reason)", code: ExitStatus.cannotCreate)
    }
}
