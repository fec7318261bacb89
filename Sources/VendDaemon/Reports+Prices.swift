import VendControl
import VendingCore

extension Reports {
    /// `vendctl price --show`: each slot's lines as they apply (a run-time line instead of the
    /// file's it replaced), its product's lines after them, the lists and the bands.
    var prices: PricesReport {
        let pricing = machine.setup.pricing
        func line(_ line: PriceLine, source: String) -> PricesReport.Line {
            PricesReport.Line(
                list: line.list, payment: line.scope.rawValue, price: line.price.decimalString, priceText: format.string(for: line.price),
                source: source)
        }
        let slots = machine.setup.slots.compactMap { slot -> PricesReport.Slot? in
            guard let listOne = machine.price(of: slot.id) else { return nil }
            let runTime = machine.runTimeLines(of: slot.id)
            func replaced(_ file: PriceLine) -> Bool { runTime.contains { $0.list == file.list && $0.scope == file.scope } }
            let own = (runTime.map { line($0, source: "run-time") } + slot.priceLines.filter { !replaced($0) }.map { line($0, source: "file") })
                .sorted { ($0.list, $0.payment) < ($1.list, $1.payment) }
            let product = (machine.setup.catalog[slot.product]?.priceLines ?? []).map { line($0, source: "product") }
            let first = line(
                PriceLine(list: .standardList, scope: .any, price: listOne), source: machine.priceOverrides[slot.id] == nil ? "file" : "run-time")
            return PricesReport.Slot(
                slot: slot.id.rawValue, product: slot.product.rawValue,
                productName: machine.setup.catalog[slot.product]?.name ?? slot.product.rawValue,
                lines: [first] + own + product)
        }
        return PricesReport(
            lists: pricing.lists.sorted { $0.key < $1.key }.map { PricesReport.List(list: $0.key, name: $0.value) },
            bands: pricing.bands.map {
                PricesReport.Band(
                    list: $0.list, days: $0.days.sorted().map(\.description), from: LocalTime.clock($0.from), to: LocalTime.clock($0.to))
            },
            timeZone: pricing.timeZone.name, inForce: priceBand, slots: slots)
    }
}
