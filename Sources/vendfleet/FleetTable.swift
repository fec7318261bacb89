import VendReports
import VendTelemetry
import VendText
import VendingCore

/// The fleet as a table: one line per machine, amounts in the currency's format, times as dates
/// (local time) so that a redraw shows what changed, not a clock ticking.
struct FleetTable {
    /// The operator's template for amounts; nil: grouped digits and the currency code.
    let moneyFormat: String?

    func render(_ view: FleetView, now: Int64, connection: String?) -> String {
        var lines: [String] = connection.map { [$0, ""] } ?? []
        guard !view.machines.isEmpty else {
            return
                (lines
                + [
                    "no machine has reported under \(view.topics.prefix)/ on this broker yet (check --topic-prefix, and that this broker user may read \(view.topics.prefix)/#)"
                ]).joined(separator: "\n")
        }
        var table = TextTable([.left, .left, .left, .right, .right, .right, .left, .left])
        table.add(["machine", "state", "last seen", "credit", "cash sales", "card sales", "stock alerts", "faults"])
        for machine in view.machines.values.sorted(by: { $0.id < $1.id }) {
            let state = machine.state
            let currency = machine.cash?.currency ?? machine.stock?.currency ?? state?.currency
            let alerts = machine.stockAlerts(now: now)
            let faults = machine.faults
            // Card sales are absent while there are none: zero, in the digits of the cash sales.
            let cardSales = machine.cash.map { cash in amount(Array((cash.cardSales ?? [:]).values), currency, like: cash.sales) }
            table.add([
                machine.id,
                state.map { $0.online ? $0.state : "offline" } ?? "?",
                machine.lastSeen == 0 ? "never" : DateText.format(machine.lastSeen, seconds: true),
                state?.credit.map { amount([$0], currency, like: $0) } ?? "-",
                machine.cash.map { amount([$0.sales], currency, like: $0.sales) } ?? "-",
                cardSales ?? "-",
                alerts.isEmpty ? "-" : alerts.joined(separator: ", "),
                faults.isEmpty ? "-" : faults.joined(separator: "; "),
            ])
        }
        lines += table.render()
        return lines.joined(separator: "\n")
    }

    /// The sum of `decimals` (exact decimal strings in `code`) as the format shows it; "-" when
    /// they do not read as amounts. vendd writes every amount with its currency's minor digits
    /// ("1.50", "1200"): `model`, one of the machine's amounts, tells how many.
    func amount(_ decimals: [String], _ code: String?, like model: String) -> String {
        guard let code else { return "-" }
        let currency = Currency(code: code, minorDigits: model.split(separator: ".").dropFirst().first?.count ?? 0)
        var total = Money.zero(currency)
        for decimal in decimals {
            guard let value = try? Money(parsing: decimal, currency: currency) else { return "-" }
            total += value
        }
        let format =
            moneyFormat.flatMap { MoneyFormat(template: $0) }
            ?? MoneyFormat(template: "{amount} \(code)", groupingSeparator: ",", decimalSeparator: ".")!
        return format.string(for: total)
    }
}
