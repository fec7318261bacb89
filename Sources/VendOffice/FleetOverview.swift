import FoundationEssentials
import VendFleetStore
import VendTelemetry

/// One machine on the fleet page, from the store's tables.
struct MachineSummary {
    let machine: String
    /// From the retained `state` message; nil before any.
    var online: Bool?
    /// `in-service`, `service-mode`, `out-of-order`, `offline`; `unknown` before any state.
    var state = "unknown"
    var reason: String?
    /// When the state was sent (or received, when the message has no `at`).
    var since: Int64?
    /// The last commit of the machine's events.
    var lastCommit: Int64?
    var currency: String?
    var alerts: [String] = []
    var sales = Sales()

    struct Sales {
        var todayCash = Amount.zero
        var todayCard = Amount.zero
        var weekCash = Amount.zero
        var weekCard = Amount.zero
    }
}

/// The fleet page's figures: every machine with its state, alerts and sales, read with a fixed
/// number of statements whatever the fleet's size.
struct FleetOverview {
    let sql: FleetSQL

    /// `todayStart` and `weekStart`: milliseconds since the epoch of the local midnights.
    func machines(now: Int64, todayStart: Int64, weekStart: Int64) throws -> [MachineSummary] {
        var machines: [String: MachineSummary] = [:]
        func update(_ machine: String?, _ change: (inout MachineSummary) -> Void) {
            guard let machine else { return }
            change(&machines[machine, default: MachineSummary(machine: machine)])
        }
        for row in try sql.rows("SELECT machine, updated_at FROM machine_progress", []) {
            update(row[0]) { $0.lastCommit = row[1].flatMap { Int64($0) } }
        }
        let decoder = JSONDecoder()
        for row in try sql.rows("SELECT machine, payload, received_at FROM machine_latest WHERE subject = 'state'", []) {
            let message = row[1].flatMap { try? decoder.decode(MachineStateMessage.self, from: Data($0.utf8)) }
            update(row[0]) { summary in
                summary.online = message?.online
                summary.state = message?.state ?? "unreadable state message"
                summary.reason = message?.reason
                summary.since = message?.at ?? row[2].flatMap { Int64($0) }
                if summary.currency == nil { summary.currency = message?.currency }
            }
        }
        for row in try sql.rows("SELECT machine, slot, stock, available, earliest_expiry, currency FROM machine_slots ORDER BY machine, slot", []) {
            let slot = row[1] ?? ""
            let stock = row[2].flatMap { Int64($0) } ?? 0
            let available = row[3].flatMap { Int64($0) } ?? 0
            let expiry = row[4].flatMap { Int64($0) }
            update(row[0]) { summary in
                summary.currency = summary.currency ?? row[5]
                if stock == 0 {
                    summary.alerts.append("\(slot) sold out")
                } else if let expiry, expiry <= now, available < stock {
                    summary.alerts.append("\(slot) expired (\(stock - available))")
                }
            }
        }
        for row in try sql.rows("SELECT machine, zone, health, temperature, sensor_fault FROM machine_zones ORDER BY machine, zone", []) {
            let zone = row[1] ?? ""
            update(row[0]) { summary in
                switch row[2] {
                case "locked": summary.alerts.append("zone \(zone) locked (food safety)")
                case "past-limit": summary.alerts.append("zone \(zone) past its limit\(row[3].map { " (\($0) °C)" } ?? "")")
                default: break
                }
                if let fault = row[4] { summary.alerts.append("zone \(zone) sensor: \(fault)") }
            }
        }
        for row in try sql.rows("SELECT machine, currency, exact_change_only, unknown_payouts FROM machine_cash", []) {
            update(row[0]) { summary in
                summary.currency = summary.currency ?? row[1]
                if row[2] == "1" { summary.alerts.append("exact change only") }
                if let unknown = row[3].flatMap(Amount.init), unknown.units > 0 { summary.alerts.append("payouts of unknown outcome") }
            }
        }
        // A slot's latest `slot-fault` event says whether a motor fault holds it out of service.
        var faults: [String: [String: String?]] = [:]
        for row in try sql.rows("SELECT machine, payload FROM events WHERE type = 'slot-fault' ORDER BY machine, seq", []) {
            guard let machine = row[0], let event = row[1].flatMap({ try? decoder.decode(TelemetryEvent.self, from: Data($0.utf8)) }),
                let slot = event.slot
            else { continue }
            faults[machine, default: [:]][slot] = event.on == true ? .some(event.reason ?? "fault") : .some(nil)
        }
        for (machine, slots) in faults {
            for (slot, reason) in slots.sorted(by: { $0.key < $1.key }) {
                if let reason { update(machine) { $0.alerts.append("\(slot) out of service: \(reason)") } }
            }
        }
        for row in try sql.rows("SELECT machine, SUM(last_seq - first_seq + 1) FROM gaps GROUP BY machine", []) {
            update(row[0]) { $0.alerts.append("\(row[1] ?? "?") events missing (gaps in its sequence)") }
        }
        for sale in try sales(todayStart: todayStart, weekStart: weekStart) {
            update(sale.machine) { summary in
                summary.currency = summary.currency ?? sale.currency
                let total = sale.price * sale.count
                switch (sale.card, sale.today) {
                case (false, true):
                    summary.sales.todayCash = summary.sales.todayCash + total
                    summary.sales.weekCash = summary.sales.weekCash + total
                case (true, true):
                    summary.sales.todayCard = summary.sales.todayCard + total
                    summary.sales.weekCard = summary.sales.weekCard + total
                case (false, false): summary.sales.weekCash = summary.sales.weekCash + total
                case (true, false): summary.sales.weekCard = summary.sales.weekCard + total
                }
            }
        }
        return machines.values.sorted { $0.machine < $1.machine }
    }

    private struct SaleGroup {
        let machine: String
        let card: Bool
        let price: Amount
        let currency: String
        let today: Bool
        let count: Int64
    }

    /// Sold vends since `weekStart`, grouped by machine, payment, price and day: a sold
    /// `vend-ended` (with its `payment`) and the price of its `vend-started` (same `vend`, begun
    /// at most an hour before the week).
    /// Free vends (free-cashless) are no sale.
    private func sales(todayStart: Int64, weekStart: Int64) throws -> [SaleGroup] {
        let d = sql.dialect
        // One pass, grouped by (machine, vend), rather than a join of the two event types: both
        // engines' planners joined them by walking every vend-started of the week for each
        // vend-ended (9 s for 200 machines on SQLite).
        let rows = try sql.rows(
            """
            SELECT machine, payment, amount, currency, today, COUNT(*) FROM (
                SELECT machine, MAX(payment) AS payment, MAX(amount) AS amount, MAX(currency) AS currency, MAX(today) AS today,
                    MAX(sold) AS sold, MAX(started) AS started
                FROM (
                    SELECT machine, \(d.jsonText("payload", "vend")) AS vend, \(d.jsonText("payload", "payment")) AS payment,
                        CAST(NULL AS TEXT) AS amount, \(d.jsonText("payload", "currency")) AS currency,
                        CASE WHEN at >= ? THEN 1 ELSE 0 END AS today,
                        CASE WHEN \(d.jsonText("payload", "outcome")) = 'sold' THEN 1 ELSE 0 END AS sold, 0 AS started
                    FROM events WHERE type = 'vend-ended' AND at >= ?
                    UNION ALL
                    SELECT machine, \(d.jsonText("payload", "vend")), NULL, \(d.jsonText("payload", "amount")), NULL, 0, 0, 1
                    FROM events WHERE type = 'vend-started' AND at >= ?
                ) AS vends GROUP BY machine, vend
            ) AS paired WHERE sold = 1 AND started = 1
            GROUP BY 1, 2, 3, 4, 5
            """, [.integer(todayStart), .integer(weekStart), .integer(weekStart - 3_600_000)])
        return rows.compactMap { row in
            guard let machine = row[0], let payment = row[1], let price = row[2].flatMap(Amount.init), let currency = row[3],
                let count = row[5].flatMap({ Int64($0) })
            else { return nil }
            let card: Bool
            switch payment {
            case "cash": card = false
            case "cashless1", "cashless2": card = true
            default: return nil
            }
            return SaleGroup(machine: machine, card: card, price: price, currency: currency, today: row[4] == "1", count: count)
        }
    }
}
