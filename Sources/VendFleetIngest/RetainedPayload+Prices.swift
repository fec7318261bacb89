import VendTelemetry
import VendingCore

/// The price lists in a retained `stock` message (docs/mqtt.md), checked as strictly as its
/// other fields: the office reads them from the stored payload, and shows only what a machine
/// could have meant. The rules are the machine's own (`PriceListNumber.listRange`, `PriceScope`,
/// `Weekday`), so that the store refuses nothing vendd can send.
extension RetainedPayload {
    /// A slot's `priceLines`: each on a list 1 to 999, for a payment vendd knows, at an exact
    /// amount, each list and payment once.
    static func priceLines(_ lines: [StockMessage.PriceLine], of slot: String) throws {
        var seen: [(list: Int, payment: String)] = []
        for line in lines {
            try list(line.list, "slot \(slot)'s price line")
            guard PriceScope(rawValue: line.payment) != nil else {
                throw EventPayload.Refusal(
                    reason:
                        "slot \(slot)'s price line on list \(line.list) is for payment '\(line.payment)', not one of \(PriceScope.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            try amount(line.price, "slot \(slot)'s price on list \(line.list) for \(line.payment)")
            guard !seen.contains(where: { $0.list == line.list && $0.payment == line.payment }) else {
                throw EventPayload.Refusal(reason: "slot \(slot) has a price on list \(line.list) for \(line.payment) twice")
            }
            seen.append((line.list, line.payment))
        }
    }

    /// `priceLists`: each list numbered 1 to 999, once.
    static func priceLists(_ lists: [StockMessage.PriceList]) throws {
        var seen: Set<Int> = []
        for entry in lists {
            try list(entry.list, "a price list's number")
            guard seen.insert(entry.list).inserted else { throw EventPayload.Refusal(reason: "price list \(entry.list) is named twice") }
        }
    }

    /// `bands`: a list 1 to 999, at least one day of `sun`…`sat` each once, `HH:MM` from (00:00
    /// to 23:59) to (00:00 to 24:00), not both the same.
    static func bands(_ bands: [StockMessage.Band]) throws {
        let dayNames = Weekday.allCases.map(\.description)
        for band in bands {
            let name = "the band on list \(band.list)"
            try list(band.list, "a band's list")
            guard !band.days.isEmpty else { throw EventPayload.Refusal(reason: "\(name) names no day") }
            for (index, day) in band.days.enumerated() {
                guard dayNames.contains(day) else {
                    throw EventPayload.Refusal(reason: "\(name) starts on '\(day)', not one of \(dayNames.joined(separator: ", "))")
                }
                guard !band.days[..<index].contains(day) else { throw EventPayload.Refusal(reason: "\(name) names \(day) twice") }
            }
            guard let from = minutes(band.from, midnightEnd: false) else {
                throw EventPayload.Refusal(reason: "\(name) starts at '\(band.from)', not a time from 00:00 to 23:59")
            }
            guard let to = minutes(band.to, midnightEnd: true) else {
                throw EventPayload.Refusal(reason: "\(name) ends at '\(band.to)', not a time from 00:00 to 24:00")
            }
            guard from != to else {
                throw EventPayload.Refusal(reason: "\(name) is empty: it starts and ends at \(band.from)")
            }
        }
    }

    private static func list(_ number: Int, _ name: String) throws {
        guard PriceListNumber.listRange.contains(number) else {
            throw EventPayload.Refusal(
                reason: "\(name) \(number) is not a price list (\(PriceListNumber.listRange.lowerBound) to \(PriceListNumber.listRange.upperBound))")
        }
    }

    /// `HH:MM` as minutes since midnight; `24:00` (1440) only at a band's end.
    private static func minutes(_ text: String, midnightEnd: Bool) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let hours = Int(parts[0]), let minutes = Int(parts[1]), minutes < 60
        else { return nil }
        let total = hours * 60 + minutes
        return total < 1_440 || (midnightEnd && total == 1_440) ? total : nil
    }
}
