import VendFleetStore

/// "Machines to visit": the fleet ranked by what a visit would fix. Per machine
///
///     score = 3 × slots sold out + 2 × slots projected to sell out within `horizonDays`
///             + other alerts (the fleet page's, sold-out slots not counted twice)
///
/// where a slot with stock s that sold n over the last 7 days (today and the 6 before) sells
/// n / 7 a day and is empty in s × 7 / n days. Ties: the earliest projected sell-out first, then
/// the fuller cash box (the `cashBox` of the latest `cash` message: what it took since the last
/// collection), then the machine. Machines with a score of 0 and an empty cash box are left out.
struct VisitRanking {
    static let horizonDays: Int64 = 2

    struct Candidate {
        let summary: MachineSummary
        /// Slots with stock that sell out within the horizon at their rate, soonest first.
        var projected: [(slot: String, days: Double)] = []
        var cashBox: Amount?

        var otherAlerts: Int { summary.alerts.count - summary.soldOut }
        var score: Int { 3 * summary.soldOut + 2 * projected.count + otherAlerts }
    }

    let sql: FleetSQL

    /// `machines`: the fleet page's; `weekStart`: the box-local day 6 days before today.
    func rank(_ machines: [MachineSummary], weekStart: Int64) throws -> [Candidate] {
        var candidates = Dictionary(uniqueKeysWithValues: machines.map { ($0.machine, Candidate(summary: $0)) })
        // Only the slots that empty within the horizon: stock × 7 ≤ sold × horizon.
        let rows = try sql.rows(
            """
            SELECT s.machine, s.slot, s.stock, r.sold FROM machine_slots s JOIN (
                SELECT machine, slot, SUM(sold) AS sold FROM slot_sales_days WHERE day >= ? GROUP BY machine, slot
            ) AS r ON r.machine = s.machine AND r.slot = s.slot
            WHERE s.stock > 0 AND s.stock * 7 <= r.sold * ?
            """, [.integer(weekStart), .integer(Self.horizonDays)])
        for row in rows {
            guard let machine = row[0], let slot = row[1], let stock = row[2].flatMap({ Int64($0) }), let sold = row[3].flatMap({ Int64($0) }),
                sold > 0
            else { continue }
            candidates[machine]?.projected.append((slot, Double(stock * 7) / Double(sold)))
        }
        for row in try sql.rows("SELECT machine, \(sql.dialect.jsonText("payload", "cashBox")) FROM machine_latest WHERE subject = 'cash'", []) {
            if let machine = row[0], let amount = row[1].flatMap(Amount.init) { candidates[machine]?.cashBox = amount }
        }
        return candidates.values.map { candidate in
            var sorted = candidate
            sorted.projected.sort { ($0.days, $0.slot) < ($1.days, $1.slot) }
            return sorted
        }.filter { $0.score > 0 || ($0.cashBox?.units ?? 0) > 0 }.sorted(by: Self.before)
    }

    private static func before(_ left: Candidate, _ right: Candidate) -> Bool {
        if left.score != right.score { return left.score > right.score }
        let (soonest, otherSoonest) = (left.projected.first?.days ?? .infinity, right.projected.first?.days ?? .infinity)
        if soonest != otherSoonest { return soonest < otherSoonest }
        let (box, otherBox) = (left.cashBox ?? .zero, right.cashBox ?? .zero)
        if Amount.lessThan(box, otherBox) || Amount.lessThan(otherBox, box) { return Amount.lessThan(otherBox, box) }
        return left.summary.machine < right.summary.machine
    }
}
