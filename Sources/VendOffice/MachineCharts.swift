import VendFleetStore
import VendReports

/// The machine page's charts, drawn as `vendctl report` draws its own (VendReports): sales per
/// day and per product over `salesDays`, and each zone's temperatures over the store's
/// `ZoneReadings.keptMinutes`.
struct MachineCharts {
    static let salesDays = 14
    /// At most this many points per zone line: each the worst reading of its stretch (the
    /// highest in a cold zone, the lowest in a hot one), so a brief excursion still shows.
    static let zonePoints = 700

    let sql: FleetSQL
    let amounts: AmountFormatter

    /// A sold vend: its `vend-ended` (sold, with its payment) and the price and product of its
    /// `vend-started`, from `since` on.
    struct Sale {
        let at: Int64
        let product: String
        let price: Amount
        let currency: String
        let card: Bool
    }

    func sales(of machine: String, since: Int64) throws -> [Sale] {
        let d = sql.dialect
        let rows = try sql.rows(
            """
            SELECT type, at, \(d.jsonText("payload", "vend")), \(d.jsonText("payload", "outcome")), \(d.jsonText("payload", "payment")),
                \(d.jsonText("payload", "amount")), \(d.jsonText("payload", "currency")), \(d.jsonText("payload", "product"))
            FROM events WHERE machine = ? AND type IN ('vend-started', 'vend-ended') AND at >= ? ORDER BY seq
            """, [.text(machine), .integer(since - 3_600_000)])
        var started: [String: (price: Amount, currency: String, product: String?)] = [:]
        var sales: [Sale] = []
        for row in rows {
            guard let vend = row[2], let at = row[1].flatMap({ Int64($0) }) else { continue }
            if row[0] == "vend-started" {
                if let price = row[5].flatMap(Amount.init), let currency = row[6] { started[vend] = (price, currency, row[7]) }
                continue
            }
            guard row[3] == "sold", at >= since, let start = started[vend] else { continue }
            let card: Bool
            switch row[4] {
            case "cash": card = false
            case "cashless1", "cashless2": card = true
            default: continue
            }
            sales.append(Sale(at: at, product: start.product ?? row[7] ?? "?", price: start.price, currency: start.currency, card: card))
        }
        return sales
    }

    /// Sales per local day, cash and card stacked; and per product, a pie (units sold). An
    /// operator sees amounts; a driver, who sees no prices, counts of sales.
    func salesCharts(of machine: String, now: Int64, prices: Bool) throws -> (days: String, products: String) {
        let midnights = (0..<Self.salesDays).reversed().map { Office.localMidnight(now, daysBack: $0) }
        let sales = try self.sales(of: machine, since: midnights[0])
        let currency = sales.first?.currency ?? ""
        let digits = sales.map(\.price.digits).max() ?? 0
        var cash = [Int64](repeating: 0, count: midnights.count)
        var card = cash
        for sale in sales where sale.currency == currency {
            guard let day = midnights.lastIndex(where: { $0 <= sale.at }) else { continue }
            let units = prices ? sale.price.units(at: digits) : 1
            if sale.card { card[day] += units } else { cash[day] += units }
        }
        let formatter = amounts
        let days = ColumnChart(
            title: "Sales per day, last \(Self.salesDays) days\(prices ? "" : " (items sold)")", series: ["cash", "card"],
            categories: midnights.indices.map {
                .init(label: String(Pages.localTime(midnights[$0]).dropFirst(5).prefix(5)), values: [cash[$0], card[$0]])
            },
            stacked: true, emptyText: "no sales in \(Self.salesDays) days",
            valueText: { prices ? formatter.string(Amount(units: $0, digits: digits), currency: currency) : "\($0)" })
        var perProduct: [String: (count: Int, total: Amount)] = [:]
        for sale in sales where sale.currency == currency {
            let sold = perProduct[sale.product] ?? (0, .zero)
            perProduct[sale.product] = (sold.count + 1, sold.total + sale.price)
        }
        let slices = perProduct.sorted { ($1.value.count, $0.key) < ($0.value.count, $1.key) }.map { product, sold in
            PieChart.Slice(
                label: product, value: sold.count,
                detail: prices ? "\(sold.count) sold, \(amounts.string(sold.total, currency: currency))" : "\(sold.count) sold")
        }
        let total = sales.filter { $0.currency == currency }.count
        let products = PieChart(title: "Sales per product, last \(Self.salesDays) days", slices: slices, total: "total: \(total) sold")
        return (days.svgElement, products.svgElement)
    }

    /// One chart per zone: its readings and its set point.
    func zoneCharts(of machine: String, zones: [MachineDetail.Zone], now: Int64) throws -> [String] {
        let from = now - ZoneReadings.keptMinutes * 60_000
        let rows = try sql.rows(
            "SELECT zone, at, temperature FROM zone_readings WHERE machine = ? AND at >= ? ORDER BY zone, at", [.text(machine), .integer(from)])
        var readings: [String: [LineChart.Point]] = [:]
        for row in rows {
            guard let zone = row[0], let at = row[1].flatMap({ Int64($0) }), let value = row[2].flatMap({ Double($0) }) else { continue }
            readings[zone, default: []].append(LineChart.Point(at: at, value: value))
        }
        let days = ZoneReadings.keptMinutes / (24 * 60)
        let ticks = (0...Int(days)).reversed().map { Office.localMidnight(now, daysBack: $0) }.map {
            LineChart.Tick(at: $0, label: String(Pages.localTime($0).dropFirst(5).prefix(5)))
        }
        return zones.map { zone in
            LineChart(
                title: "Zone \(zone.zone) (\(zone.kind)), last \(days) days",
                series: [("°C", Self.worst(readings[zone.zone] ?? [], hot: zone.kind == "hot", from: from, to: now))],
                from: from, to: now, ticks: ticks, reference: zone.setPoint.flatMap(Double.init).map { ("set point \(zone.setPoint ?? "")", $0) },
                unit: "°C", breakAfter: 30 * 60_000, emptyText: "no temperature reported in \(days) days"
            ).svgElement
        }
    }

    /// At most `zonePoints` points: per stretch of time, its worst reading.
    static func worst(_ points: [LineChart.Point], hot: Bool, from: Int64, to: Int64) -> [LineChart.Point] {
        guard points.count > zonePoints else { return points }
        let stretch = max(1, (to - from) / Int64(zonePoints))
        var kept: [Int64: LineChart.Point] = [:]
        for point in points {
            let key = (point.at - from) / stretch
            if let held = kept[key], hot ? held.value <= point.value : held.value >= point.value { continue }
            kept[key] = point
        }
        return kept.values.sorted { $0.at < $1.at }
    }
}

/// The machine page's charts, as inline SVG elements.
struct MachinePageCharts {
    let days: String
    let products: String
    let zones: [String]
}
