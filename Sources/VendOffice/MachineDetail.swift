import FoundationEssentials
import VendFleetStore
import VendTelemetry

/// One machine's page: its planogram and price lists, zones, cash position and recent events, from
/// the store.
struct MachineDetail {
    struct Slot {
        let slot: String
        let product: String
        let price: String
        let stock: Int64
        let available: Int64
        let capacity: Int64
        let earliestExpiry: Int64?
        /// The motor fault holding it out of service, if its latest `slot-fault` says so.
        var fault: String?
        /// Its prices besides `price` (list 1 for every payment), from the stored stock message.
        var priceLines: [StockMessage.PriceLine] = []
    }

    struct Zone {
        let zone: String
        let kind: String
        let health: String
        let temperature: String?
        let setPoint: String?
        let sensorFault: String?
        let since: Int64?
        let cause: String?
    }

    struct Event {
        let seq: Int64
        let at: Int64
        let type: String
        /// The event's own fields worth a glance (slot, product, amount, outcome, payment, reason).
        let summary: String
        let currency: String?
        let amount: String?
    }

    let machine: String
    var state: MachineStateMessage?
    var slots: [Slot] = []
    var zones: [Zone] = []
    var cash: CashMessage?
    var events: [Event] = []
    /// The slots' currency (the stock message's), for prices.
    var currency: String?
    /// The machine's lists besides list 1 and their bands, from the stored stock message.
    var priceLists: [StockMessage.PriceList] = []
    var bands: [StockMessage.Band] = []

    /// Nil when the store knows nothing of `machine`.
    static func load(_ machine: String, sql: FleetSQL, recent: Int) throws -> MachineDetail? {
        var detail = MachineDetail(machine: machine)
        let decoder = JSONDecoder()
        var known = false
        var stock: StockMessage?
        for row in try sql.rows("SELECT subject, payload FROM machine_latest WHERE machine = ?", [.text(machine)]) {
            known = true
            guard let payload = row[1].map({ Data($0.utf8) }) else { continue }
            switch row[0] {
            case "state": detail.state = try? decoder.decode(MachineStateMessage.self, from: payload)
            case "cash": detail.cash = try? decoder.decode(CashMessage.self, from: payload)
            // The price lists are kept in the payload only (the ingester checked them).
            case "stock": stock = try? decoder.decode(StockMessage.self, from: payload)
            default: break
            }
        }
        let slotRows = try sql.rows(
            "SELECT slot, product, price, stock, available, capacity, earliest_expiry, currency FROM machine_slots WHERE machine = ? ORDER BY slot",
            [.text(machine)])
        detail.slots = slotRows.compactMap { row in
            guard let slot = row[0], let product = row[1], let price = row[2], let stock = row[3].flatMap({ Int64($0) }),
                let available = row[4].flatMap({ Int64($0) }), let capacity = row[5].flatMap({ Int64($0) })
            else { return nil }
            detail.currency = row[7]
            return Slot(
                slot: slot, product: product, price: price, stock: stock, available: available, capacity: capacity,
                earliestExpiry: row[6].flatMap { Int64($0) })
        }
        detail.priceLists = stock?.priceLists ?? []
        detail.bands = stock?.bands ?? []
        for slot in stock?.slots ?? [] {
            if let lines = slot.priceLines, let index = detail.slots.firstIndex(where: { $0.slot == slot.slot }) {
                detail.slots[index].priceLines = lines
            }
        }
        for row in try sql.rows("SELECT payload FROM events WHERE machine = ? AND type = 'slot-fault' ORDER BY seq", [.text(machine)]) {
            guard let event = row[0].flatMap({ try? decoder.decode(TelemetryEvent.self, from: Data($0.utf8)) }), let slot = event.slot,
                let index = detail.slots.firstIndex(where: { $0.slot == slot })
            else { continue }
            detail.slots[index].fault = event.on == true ? event.reason ?? "fault" : nil
        }
        detail.zones = try sql.rows(
            "SELECT zone, kind, health, temperature, set_point, sensor_fault, since, cause FROM machine_zones WHERE machine = ? ORDER BY zone",
            [.text(machine)]
        ).map {
            Zone(
                zone: $0[0] ?? "", kind: $0[1] ?? "", health: $0[2] ?? "", temperature: $0[3], setPoint: $0[4], sensorFault: $0[5],
                since: $0[6].flatMap { Int64($0) }, cause: $0[7])
        }
        detail.events = try sql.rows(
            "SELECT seq, at, type, payload FROM events WHERE machine = ? ORDER BY seq DESC LIMIT ?", [.text(machine), .integer(Int64(recent))]
        ).map { row in
            let event = row[3].flatMap { try? decoder.decode(TelemetryEvent.self, from: Data($0.utf8)) }
            let fields: [String?] = [
                event?.slot, event?.product, event?.outcome, event?.payment, event?.zone, event?.on.map { $0 ? "on" : "off" }, event?.reason,
            ]
            return Event(
                seq: row[0].flatMap { Int64($0) } ?? 0, at: row[1].flatMap { Int64($0) } ?? 0, type: row[2] ?? "",
                summary: fields.compactMap { $0 }.joined(separator: " · "), currency: event?.currency, amount: event?.amount)
        }
        known = known || !detail.events.isEmpty || !detail.slots.isEmpty
        return known ? detail : nil
    }
}
