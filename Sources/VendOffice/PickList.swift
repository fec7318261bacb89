import VendFleetStore

/// What the driver loads for one route: per machine (in visit order) and slot, how many to bring
/// each slot to its target (the par level the operator set, else the capacity), with the
/// expired items to take out first, the slots whose next item expires within two days (to check
/// and unload on the visit); and the totals per product for the warehouse.
struct PickList {
    /// A slot whose earliest expiry is this close is named on the list: the store knows only each
    /// slot's earliest expiry, not how many items share it, so the driver checks the slot.
    static let expiringSoonWithin: Int64 = 2 * 86_400_000

    struct Line: Equatable {
        let machine: String
        let slot: String
        let product: String
        let stock: Int64
        let capacity: Int64
        /// The par level, when the operator set one (at most the capacity).
        let par: Int64?
        /// Items past their date, unloaded before loading.
        let expired: Int64
        /// The slot's earliest expiry (ms since the epoch) when it is still ahead but within
        /// `expiringSoonWithin`.
        let expiresSoon: Int64?
        /// min(par, capacity), or the capacity.
        var target: Int64 { min(par ?? capacity, capacity) }
        /// What brings the slot to its target once the expired items are out.
        var load: Int64 { max(0, target - (stock - expired)) }
    }

    struct Total: Equatable {
        let product: String
        let load: Int64
        let expired: Int64
    }

    let route: String
    /// The route's machines in visit order, with their lines (none: no stock report stored).
    let machines: [(machine: String, lines: [Line])]

    var totals: [Total] {
        var load: [String: Int64] = [:]
        var expired: [String: Int64] = [:]
        for line in machines.flatMap(\.lines) {
            load[line.product, default: 0] += line.load
            expired[line.product, default: 0] += line.expired
        }
        return load.keys.sorted().map { Total(product: $0, load: load[$0] ?? 0, expired: expired[$0] ?? 0) }
    }

    /// The route's pick list from the slots' latest stock and the par levels.
    static func make(route: OfficeRoute, sql: FleetSQL, now: Int64) throws -> PickList {
        let rows = try sql.rows(
            """
            SELECT s.machine, s.slot, s.product, s.stock, s.available, s.capacity, s.earliest_expiry, p.par
            FROM office_route_machines m JOIN machine_slots s ON s.machine = m.machine
            LEFT JOIN office_par_levels p ON p.machine = s.machine AND p.slot = s.slot
            WHERE m.route = ? ORDER BY m.position, s.slot
            """, [.text(route.name)])
        var lines: [String: [Line]] = [:]
        for row in rows {
            guard let machine = row[0], let slot = row[1], let product = row[2], let stock = row[3].flatMap({ Int64($0) }),
                let available = row[4].flatMap({ Int64($0) }), let capacity = row[5].flatMap({ Int64($0) })
            else { continue }
            let expiry = row[6].flatMap { Int64($0) }
            let expired = expiry.map { $0 <= now } == true ? max(0, stock - available) : 0
            let expiresSoon = expiry.flatMap { $0 > now && $0 - now <= expiringSoonWithin && stock > 0 ? $0 : nil }
            lines[machine, default: []].append(
                Line(
                    machine: machine, slot: slot, product: product, stock: stock, capacity: capacity, par: row[7].flatMap { Int64($0) },
                    expired: expired, expiresSoon: expiresSoon))
        }
        return PickList(route: route.name, machines: route.machines.map { ($0, lines[$0] ?? []) })
    }

    /// RFC 4180 CSV, one line per slot, then the totals; a cell that a spreadsheet would take for
    /// a formula (= + - @) is prefixed with a quote.
    /// `expires_soon` is the slot's earliest expiry in the box's local time, when it is near.
    var csv: String {
        var text = "machine,slot,product,stock,capacity,par,expired,load,expires_soon\r\n"
        for line in machines.flatMap(\.lines) {
            let cells = [
                line.machine, line.slot, line.product, "\(line.stock)", "\(line.capacity)", line.par.map { "\($0)" } ?? "", "\(line.expired)",
                "\(line.load)", line.expiresSoon.map(Pages.localTime) ?? "",
            ]
            text += cells.map(Self.cell).joined(separator: ",") + "\r\n"
        }
        for total in totals {
            text += ["TOTAL", "", total.product, "", "", "", "\(total.expired)", "\(total.load)", ""].map(Self.cell).joined(separator: ",") + "\r\n"
        }
        return text
    }

    static func cell(_ text: String) -> String {
        var text = text
        if let first = text.first, "=+-@\t\r".contains(first) { text = "'" + text }
        guard text.contains(where: { ",\"\r\n".contains($0) }) else { return text }
        return "\"" + text.replacingScalars(["\"": "\"\""]) + "\""
    }
}
