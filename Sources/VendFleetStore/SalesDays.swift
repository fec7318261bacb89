import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// A sold vend as the sales tables count it (schema 5): a `vend-ended` with `outcome` sold, paid
/// in cash or by card (`cashless1`, `cashless2`; free vends are no sale), at its `amount`.
public struct SaleColumns: Sendable, Equatable {
    public let slot: String?
    public let card: Bool
    public let currency: String
    /// The amount in ten-thousandths of the currency's unit ("1.50" is 15,000): sums are exact
    /// integers that a commit can add in SQL.
    public let units: Int64
    /// The digits after the point the machine wrote ("1.50": 2), to show sums as it does.
    public let digits: Int

    /// The sale a `vend-ended` event's fields make; nil when it is no sale, or its amount is not
    /// an exact decimal with at most 4 digits after the point.
    public init?(outcome: String?, payment: String?, amount: String?, slot: String?, currency: String?) {
        guard outcome == "sold", let payment, let amount, let currency else { return nil }
        switch payment {
        case "cash": card = false
        case "cashless1", "cashless2": card = true
        default: return nil
        }
        let parts = amount.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            parts.count == 1 || parts[1].count <= Self.scale, parts[0].count <= 14, var units = Int64(parts.joined())
        else { return nil }
        digits = parts.count == 2 ? parts[1].count : 0
        for _ in digits..<Self.scale { units *= 10 }
        self.units = units
        self.slot = slot
        self.currency = currency
    }

    /// Read from an event's payload when it is a `vend-ended`.
    init?(type: String, payload: String) {
        guard type == "vend-ended", let fields = try? JSONDecoder().decode(Fields.self, from: Data(payload.utf8)) else { return nil }
        self.init(outcome: fields.outcome, payment: fields.payment, amount: fields.amount, slot: fields.slot, currency: fields.currency)
    }

    private struct Fields: Decodable {
        let outcome: String?
        let payment: String?
        let amount: String?
        let slot: String?
        let currency: String?
    }

    /// The stored amounts' digits after the point.
    public static let scale = 4
}

/// Sales summed per machine and box-local day, and per slot, before they are added to the
/// tables: one row per key, as one statement over a batch needs.
struct SalesTally {
    struct DayKey: Hashable {
        let day: Int64
        let machine: String
    }

    struct DayTotals {
        var currency: String
        var digits: Int
        var cashCount: Int64 = 0
        var cashUnits: Int64 = 0
        var cardCount: Int64 = 0
        var cardUnits: Int64 = 0
    }

    struct SlotKey: Hashable {
        let day: Int64
        let machine: String
        let slot: String
    }

    var days: [DayKey: DayTotals] = [:]
    var slots: [SlotKey: Int64] = [:]

    var isEmpty: Bool { days.isEmpty }

    /// `count` sales of `sale` on `machine` at `at` (milliseconds since the epoch).
    mutating func add(_ sale: SaleColumns, machine: String, at: Int64, count: Int64 = 1) {
        let day = LocalDay.of(at)
        let key = DayKey(day: day, machine: machine)
        var totals = days[key] ?? DayTotals(currency: sale.currency, digits: sale.digits)
        totals.currency = sale.currency
        totals.digits = max(totals.digits, sale.digits)
        if sale.card {
            totals.cardCount += count
            totals.cardUnits += sale.units * count
        } else {
            totals.cashCount += count
            totals.cashUnits += sale.units * count
        }
        days[key] = totals
        if let slot = sale.slot { slots[SlotKey(day: day, machine: machine, slot: slot), default: 0] += count }
    }

    /// What an upsert of `sales_days` sets on a held row: the counts and amounts added.
    static func accumulate(_ dialect: SQLDialect) -> String {
        let greatest = dialect == .sqlite ? "MAX" : "GREATEST"
        return "currency = excluded.currency, digits = \(greatest)(sales_days.digits, excluded.digits), "
            + ["cash_count", "cash_units", "card_count", "card_units"].map { "\($0) = sales_days.\($0) + excluded.\($0)" }.joined(separator: ", ")
    }

    /// Adds the tally to `sales_days` and `slot_sales_days` through `run` (a statement and its
    /// values): on SQLite one prepared statement per row, on PostgreSQL one statement per table
    /// over arrays.
    func write(_ dialect: SQLDialect, run: (String, [SQLValue]) throws -> Void) throws {
        let days = self.days.sorted { ($0.key.day, $0.key.machine) < ($1.key.day, $1.key.machine) }
        let slots = self.slots.sorted { ($0.key.day, $0.key.machine, $0.key.slot) < ($1.key.day, $1.key.machine, $1.key.slot) }
        let dayColumns = "day, machine, currency, digits, cash_count, cash_units, card_count, card_units"
        let dayConflict = "ON CONFLICT (day, machine) DO UPDATE SET \(Self.accumulate(dialect))"
        let slotConflict = "ON CONFLICT (day, machine, slot) DO UPDATE SET sold = slot_sales_days.sold + excluded.sold"
        switch dialect {
        case .sqlite:
            for (key, totals) in days {
                try run(
                    "INSERT INTO sales_days (\(dayColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?) \(dayConflict)",
                    [
                        .integer(key.day), .text(key.machine), .text(totals.currency), .integer(Int64(totals.digits)), .integer(totals.cashCount),
                        .integer(totals.cashUnits), .integer(totals.cardCount), .integer(totals.cardUnits),
                    ])
            }
            for (key, sold) in slots {
                try run(
                    "INSERT INTO slot_sales_days (day, machine, slot, sold) VALUES (?, ?, ?, ?) \(slotConflict)",
                    [.integer(key.day), .text(key.machine), .text(key.slot), .integer(sold)])
            }
        case .postgresql:
            if !days.isEmpty {
                try run(
                    """
                    INSERT INTO sales_days (\(dayColumns))
                    SELECT * FROM unnest(?::bigint[], ?::text[], ?::text[], ?::integer[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[])
                    \(dayConflict)
                    """,
                    [
                        .text(PostgresArray.integers(days.map(\.key.day))), .text(PostgresArray.text(days.map(\.key.machine))),
                        .text(PostgresArray.text(days.map(\.value.currency))), .text(PostgresArray.integers(days.map { Int64($0.value.digits) })),
                        .text(PostgresArray.integers(days.map(\.value.cashCount))), .text(PostgresArray.integers(days.map(\.value.cashUnits))),
                        .text(PostgresArray.integers(days.map(\.value.cardCount))), .text(PostgresArray.integers(days.map(\.value.cardUnits))),
                    ])
            }
            if !slots.isEmpty {
                try run(
                    "INSERT INTO slot_sales_days (day, machine, slot, sold) SELECT * FROM unnest(?::bigint[], ?::text[], ?::text[], ?::bigint[]) \(slotConflict)",
                    [
                        .text(PostgresArray.integers(slots.map(\.key.day))), .text(PostgresArray.text(slots.map(\.key.machine))),
                        .text(PostgresArray.text(slots.map(\.key.slot))), .text(PostgresArray.integers(slots.map(\.value))),
                    ])
            }
        }
    }

    /// The sales of the events already stored, for migration 5: sold `vend-ended` events grouped
    /// in SQL by quarter hour (every time zone's offset is a whole number of quarter hours, so a
    /// quarter hour lies within one local day), then dated here as the ingester dates them.
    static func stored(_ dialect: SQLDialect, rows: (String, [SQLValue]) throws -> [[String?]]) throws -> SalesTally {
        let field = { dialect.jsonText("payload", $0) }
        let grouped = try rows(
            """
            SELECT machine, at / 900000, currency, slot, payment, amount, COUNT(*) FROM (
                SELECT machine, at, \(field("currency")) AS currency, \(field("slot")) AS slot, \(field("payment")) AS payment,
                    \(field("amount")) AS amount
                FROM events WHERE type = 'vend-ended' AND \(field("outcome")) = 'sold'
            ) AS sold GROUP BY 1, 2, 3, 4, 5, 6
            """, [])
        var tally = SalesTally()
        for row in grouped {
            guard let machine = row[0], let quarter = row[1].flatMap({ Int64($0) }), let count = row[6].flatMap({ Int64($0) }),
                let sale = SaleColumns(outcome: "sold", payment: row[4], amount: row[5], slot: row[3], currency: row[2])
            else { continue }
            tally.add(sale, machine: machine, at: quarter * 900_000, count: count)
        }
        return tally
    }
}

/// Days as the sales tables key them: the box's local date (TZ, else /etc/localtime) as the
/// integer YYYYMMDD.
public enum LocalDay {
    /// The local date of `milliseconds` since the epoch.
    public static func of(_ milliseconds: Int64) -> Int64 {
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return 0 }
        return Int64(parts.tm_year + 1900) * 10_000 + Int64(parts.tm_mon + 1) * 100 + Int64(parts.tm_mday)
    }
}
