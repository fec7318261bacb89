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
    /// The credit a customer has on the machine now (the state message's), when not zero.
    var credit: Amount?
    /// When the state was sent (or received, when the message has no `at`).
    var since: Int64?
    /// The last commit of the machine's events.
    var lastCommit: Int64?
    var currency: String?
    var alerts: [String] = []
    /// How many of `alerts` are sold-out slots.
    var soldOut = 0
    var sales = Sales()

    struct Sales {
        var todayCash = Amount.zero
        var todayCard = Amount.zero
        var weekCash = Amount.zero
        var weekCard = Amount.zero
    }
}

/// The machines' retained `state` messages as last decoded: a page decodes only the ones whose
/// payload changed since the last page (decoding all 10,000 of a fleet was nearly half of its
/// fleet page's time). The same payload is the same message, so there is nothing to invalidate;
/// machines no longer stored are dropped at each refresh.
struct StateMessageCache {
    private var decoded: [String: (payload: String, message: MachineStateMessage?)] = [:]

    /// Each machine's payload as stored now (nil: unreadable, as a payload that does not decode).
    mutating func refresh(_ rows: [(machine: String, payload: String?)]) {
        let decoder = JSONDecoder()
        var next: [String: (payload: String, message: MachineStateMessage?)] = [:]
        next.reserveCapacity(rows.count)
        for (machine, payload) in rows {
            let payload = payload ?? ""
            if let known = decoded[machine], known.payload == payload {
                next[machine] = known
            } else {
                next[machine] = (payload, try? decoder.decode(MachineStateMessage.self, from: Data(payload.utf8)))
            }
        }
        decoded = next
    }

    func message(of machine: String) -> MachineStateMessage? { decoded[machine]?.message }
}

/// The fleet page's figures: every machine with its state, alerts and sales, read with a fixed
/// number of statements whatever the fleet's size.
struct FleetOverview {
    let sql: FleetSQL
    let alerts: AlertLimits

    /// Only the slots with an alert, through the partial index `machine_slots_alerts` (schema 8):
    /// a fleet's slots are 30 times its machines.
    static let slotAlerts = """
        SELECT machine, slot, stock, available, earliest_expiry, currency FROM machine_slots
        WHERE \(FleetSchema.slotMayAlert) AND (stock = 0 OR earliest_expiry <= ?) ORDER BY machine, slot
        """

    /// From the office's settings (`outbox_alert_events`, `dex_alert_days`).
    struct AlertLimits {
        var outboxEvents = 100
        var dexDays = 14
    }

    /// `today` and `weekStart`: box-local days (`LocalDay`), today's and 6 days before.
    func machines(now: Int64, today: Int64, weekStart: Int64, states: inout StateMessageCache) throws -> [MachineSummary] {
        var machines: [String: MachineSummary] = [:]
        func update(_ machine: String?, _ change: (inout MachineSummary) -> Void) {
            guard let machine else { return }
            change(&machines[machine, default: MachineSummary(machine: machine)])
        }
        for row in try sql.rows("SELECT machine, updated_at FROM machine_progress", []) {
            update(row[0]) { $0.lastCommit = row[1].flatMap { Int64($0) } }
        }
        let stateRows = try sql.rows("SELECT machine, payload, received_at FROM machine_latest WHERE subject = 'state'", [])
        states.refresh(stateRows.map { ($0[0] ?? "", $0[1]) })
        for row in stateRows {
            let message = states.message(of: row[0] ?? "")
            update(row[0]) { summary in
                summary.online = message?.online
                summary.state = message?.state ?? "unreadable state message"
                summary.reason = message?.reason
                summary.credit = message?.credit.flatMap(Amount.init).flatMap { $0.units > 0 ? $0 : nil }
                summary.since = message?.at ?? row[2].flatMap { Int64($0) }
                if summary.currency == nil { summary.currency = message?.currency }
                if let message, message.online { summary.alerts += stateAlerts(message, now: now) }
            }
        }
        for row in try sql.rows(Self.slotAlerts, [.integer(now)]) {
            let slot = row[1] ?? ""
            let stock = row[2].flatMap { Int64($0) } ?? 0
            let available = row[3].flatMap { Int64($0) } ?? 0
            let expiry = row[4].flatMap { Int64($0) }
            update(row[0]) { summary in
                summary.currency = summary.currency ?? row[5]
                if stock == 0 {
                    summary.alerts.append("\(slot) sold out")
                    summary.soldOut += 1
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
        let decoder = JSONDecoder()
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
        // The week's sales: one indexed read of the day table the ingester keeps (schema 5).
        let rows = try sql.rows(
            """
            SELECT machine, CASE WHEN day >= ? THEN 1 ELSE 0 END, MAX(currency), MAX(digits), SUM(cash_units), SUM(card_units)
            FROM sales_days WHERE day >= ? GROUP BY 1, 2
            """, [.integer(today), .integer(weekStart)])
        for row in rows {
            guard let digits = row[3].flatMap({ Int($0) }), let cash = row[4].flatMap({ Int64($0) }), let card = row[5].flatMap({ Int64($0) })
            else { continue }
            let (cashAmount, cardAmount) = (Amount(stored: cash, digits: digits), Amount(stored: card, digits: digits))
            update(row[0]) { summary in
                summary.currency = summary.currency ?? row[2]
                summary.sales.weekCash = summary.sales.weekCash + cashAmount
                summary.sales.weekCard = summary.sales.weekCard + cardAmount
                if row[1] == "1" {
                    summary.sales.todayCash = cashAmount
                    summary.sales.todayCard = cardAmount
                }
            }
        }
        return machines.values.sorted { $0.machine < $1.machine }
    }

    /// What a machine online says of itself that needs someone: events not reaching the office,
    /// an audit the route driver has not read. (Offline, its will says neither.)
    private func stateAlerts(_ message: MachineStateMessage, now: Int64) -> [String] {
        var found: [String] = []
        if let waiting = message.outbox, waiting >= alerts.outboxEvents {
            found.append("\(waiting) events waiting in its outbox")
        }
        if let dex = message.dex {
            let day: Int64 = 86_400_000
            if let read = dex.lastReadAt {
                let days = (now - read) / day
                if days >= alerts.dexDays { found.append("DEX audit not read for \(days) days") }
            } else {
                found.append("DEX audit never read")
            }
        }
        return found
    }
}

extension [MachineSummary] {
    /// In the fleet page's order: by machine, or by state, alerts (most first) or sales (most
    /// first), then machine. Each key is computed once and the indices sorted, not the summaries
    /// moved about: at 10,000 machines that is a noticeable part of the page.
    func sorted(by order: Pages.FleetSort) -> [MachineSummary] {
        func sales(_ summary: MachineSummary) -> Int64 {
            switch order {
            case .today: -(summary.sales.todayCash + summary.sales.todayCard).units
            case .week: -(summary.sales.weekCash + summary.sales.weekCard).units
            case .machine, .state, .alerts: 0
            }
        }
        let keys = map { summary in
            (
                text: order == .state ? summary.state : "", number: order == .alerts ? Int64(-summary.alerts.count) : sales(summary),
                machine: summary.machine
            )
        }
        return indices.sorted { keys[$0] < keys[$1] }.map { self[$0] }
    }
}
