import VendControl
import VendTelemetry

/// The retained `stock` message's prices beyond each slot's list-1 `price`, read from what
/// `vendctl price --show` reports (`Reports.prices`): the fleet sees the lines the machine
/// charges by, the file's and those set at run time alike.
extension PricesReport {
    /// Per slot, the lines the core prices by besides list 1 for every payment (the slot's
    /// `price`): the slot's own, then its product's where the slot has none for that list and
    /// payment (`MachineSetup.price(of:on:payment:)`), by list and payment; no entry for a slot
    /// without any.
    var fleetPriceLines: [String: [StockMessage.PriceLine]] {
        var bySlot: [String: [StockMessage.PriceLine]] = [:]
        for slot in slots {
            // The report gives the slot's own lines before its product's: the first line for a
            // list and payment is the one that applies.
            var kept: [Line] = []
            for line in slot.lines where !(line.list == 1 && line.payment == "any") {
                if !kept.contains(where: { $0.list == line.list && $0.payment == line.payment }) { kept.append(line) }
            }
            guard !kept.isEmpty else { continue }
            bySlot[slot.slot] = kept.sorted { ($0.list, $0.payment) < ($1.list, $1.payment) }
                .map { StockMessage.PriceLine(list: $0.list, payment: $0.payment, price: $0.price) }
        }
        return bySlot
    }

    /// The lists besides list 1; nil without any.
    var fleetPriceLists: [StockMessage.PriceList]? { lists.isEmpty ? nil : lists }

    /// The time bands, as the file gives them; nil without any.
    var fleetBands: [StockMessage.Band]? { bands.isEmpty ? nil : bands }
}
