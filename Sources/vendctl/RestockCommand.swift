import ArgumentParser
import VendControl
import VendingCore

struct Restock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load items into a slot (or all slots), filling to capacity unless a count is given.",
        discussion: "The items' shelf life starts when they were loaded: --loaded says when that was (default: now).")

    @OptionGroup var connection: Connection
    @Argument(help: "A slot such as A1, or all.") var slot: String
    @Argument(help: "How many items to add (default: fill to capacity).") var count: Int?
    @Option(help: ArgumentHelp("When the items were loaded (default: now).", valueName: "date"), transform: parseDate)
    var loaded: Int64?

    func run() throws {
        try send(.restock(slot: slot, count: count, loadedAt: loaded), connection)
    }
}

struct Unload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Take items out of a slot, oldest first (all of them unless a count is given).",
        discussion:
            "Items past their shelf life are booked as discarded (vendctl status shows how many and their value). A slot stopped because its next item expired sells again once the expired items are out."
    )

    @OptionGroup var connection: Connection
    @Argument(help: "The slot, e.g. A2.") var slot: String
    @Argument(help: "How many items to take out (default: all).") var count: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("unload at least 1 item (or leave the count out to empty the slot)") }
    }

    func run() throws {
        try send(.unload(slot: slot, count: count), connection)
    }
}

struct Price: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set a slot's price on a list and for a payment, go back to the file's with default, or show every price.",
        discussion: """
            The amount is a plain decimal in the machine's currency (1300, or 1.50). Without --list and --payment it is list 1's price for every payment: the slot's price. With them it is that line only: --list N (1, or a list in pricing.lists) and --payment any, cash, cashless (either reader), cashless1 or cashless2. default removes a line set so, and the file's line (if any) applies again. A later edit of that price or line in the configuration file wins over this one.

            --show prints every slot's prices by list and payment (from the file, set at run time, or the product's), the lists, the time bands and the band in force. --band "sat 16:00" says which list applies at that local time.
            """
    )

    @OptionGroup var connection: Connection
    @Argument(help: "The slot, e.g. A1.") var slot: String?
    @Argument(help: "The new price, or default.") var amount: String?
    @Option(help: "The price list the price is on (default: 1).") var list: Int?
    @Option(help: "Which payments it is for: any (default), cash, cashless, cashless1, cashless2.") var payment: String?
    @Flag(help: "Show every slot's prices by list and payment, the lists and the time bands.") var show = false
    @Option(help: ArgumentHelp("Say which list applies at this local day and time.", valueName: "day HH:MM")) var band: String?

    func validate() throws {
        if show || band != nil {
            guard slot == nil, amount == nil, list == nil, payment == nil, !(show && band != nil) else {
                throw ValidationError("--show and --band take no slot, amount, --list or --payment, and not each other")
            }
            if let band { _ = try Self.localTime(band) }
            return
        }
        guard slot != nil, amount != nil else { throw ValidationError("give a slot and an amount (or default), or --show, or --band \"sat 16:00\"") }
        if let payment, PriceScope(rawValue: payment) == nil {
            throw ValidationError("unknown payment '\(payment)' (known: \(PriceScope.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        if let list, !PriceListNumber.listRange.contains(list) { throw ValidationError("list \(list) is not a price list number (1 to 999)") }
    }

    func run() throws {
        if show { return try reporting { try connection.show(.prices, { $0.prices }, render: Self.render) } }
        if let band {
            let time = try Self.localTime(band)
            return try reporting { try connection.show(.prices, { $0.prices }, render: { Self.list(at: time, $0) }) }
        }
        guard let slot, let amount else { return }
        let scope = payment.flatMap(PriceScope.init(rawValue:)) ?? .any
        let list = list ?? .standardList
        let command: ControlCommand =
            list == .standardList && scope == .any
            ? .price(slot: slot, amount: amount) : .priceLine(slot: slot, amount: amount, list: list, payment: scope)
        try send(command, connection)
    }

    /// "sat 16:00" (a day as the file writes it, then 24-hour time).
    static func localTime(_ text: String) throws -> LocalTime {
        let parts = text.lowercased().split(separator: " ")
        guard parts.count == 2, let day = Weekday.allCases.first(where: { $0.description == parts[0] }), let minute = clockMinutes(parts[1]),
            minute < 1_440
        else { throw ValidationError("--band takes a day and a time such as \"sat 16:00\" (days: sun, mon, tue, wed, thu, fri, sat)") }
        return LocalTime(weekday: day, minuteOfDay: minute)
    }

    private static func clockMinutes(_ text: Substring) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, parts[1].count == 2, let hours = Int(parts[0]), let minutes = Int(parts[1]), (0...24).contains(hours),
            (0..<60).contains(minutes)
        else { return nil }
        return hours * 60 + minutes
    }

    private static func listName(_ list: Int, _ report: PricesReport) -> String {
        report.lists.first { $0.list == list }.map { "list \(list) (\($0.name))" } ?? "list \(list)"
    }

    /// `--band`: the band that contains `time`, judged as vendd judges it (`TimeBand.contains`).
    static func list(at time: LocalTime, _ report: PricesReport) -> String {
        for band in report.bands {
            let days = Set(band.days.compactMap { day in Weekday.allCases.first { $0.description == day } })
            guard let from = clockMinutes(Substring(band.from)), let to = clockMinutes(Substring(band.to)) else { continue }
            if TimeBand(list: band.list, days: days, from: from, to: to).contains(time) {
                return
                    "\(time): \(listName(band.list, report)), band \(band.days.joined(separator: ",")) \(band.from)-\(band.to) (\(report.timeZone))"
            }
        }
        return "\(time): list 1, no time band (\(report.timeZone))"
    }

    static func render(_ report: PricesReport) -> String {
        var lines = ["time zone \(report.timeZone)"]
        for list in report.lists { lines.append("list \(list.list)   \(list.name)") }
        for band in report.bands {
            lines.append("band     \(listName(band.list, report)) \(band.days.joined(separator: ",")) \(band.from)-\(band.to)")
        }
        lines.append(
            report.inForce.map { "now      \(listName($0.list, report)) until \($0.untilText)" } ?? "now      list 1 (no time band in force)")
        lines.append("")
        var rows: [[String]] = []
        for slot in report.slots {
            for (index, line) in slot.lines.enumerated() {
                rows.append([
                    index == 0 ? slot.slot : "", index == 0 ? slot.productName : "", "\(line.list)", line.payment, line.priceText, line.source,
                ])
            }
        }
        lines.append(
            table([.left, .left, .right, .left, .right, .left], header: ["slot", "product", "list", "payment", "price", "from"], rows: rows))
        return lines.joined(separator: "\n")
    }
}

struct Service: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Switch service mode on (sales stop, coins are refused) or off.",
        discussion: "Service mode is also on while the service key is turned or the door is open; off cannot override those.")

    @OptionGroup var connection: Connection
    @Argument(help: "on or off.") var mode: Mode

    enum Mode: String, ExpressibleByArgument, CaseIterable { case on, off }

    func run() throws {
        try send(.service(on: mode == .on), connection)
    }
}
