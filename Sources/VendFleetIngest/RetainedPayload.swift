import FoundationEssentials
import VendFleetStore
import VendTelemetry

/// A retained message (docs/mqtt.md's `state`, `stock`, `cash`, `zone`) checked and read into
/// the store's columns. The machine (and a zone's name) is the topic's; a payload naming another
/// is stored under the topic's and warned about. `stock`, `cash` and zones must decode as their
/// schema (amounts exact decimals, counts not negative, numbers in range, slots named once, price
/// lists and bands well-formed), else the store keeps their last good one.
enum RetainedPayload {
    static func decode(_ bytes: [UInt8], machine: String, subject: String) -> Result<(RetainedUpdate, warning: String?), EventPayload.Refusal> {
        let text: String
        switch EventPayload.retainedText(bytes) {
        case .success(let checked): text = checked
        case .failure(let refusal): return .failure(refusal)
        }
        do {
            let (columns, named) = try readColumns(Data(bytes), subject: subject)
            let warning = named.flatMap { named in
                named == machine
                    ? nil : "the \(subject) payload names machine '\(named)' but arrived on machine '\(machine)''s topic: stored as '\(machine)''s"
            }
            return .success((RetainedUpdate(machine: machine, subject: subject, payload: text, columns: columns), warning))
        } catch let refusal as EventPayload.Refusal {
            return .failure(refusal)
        } catch DecodingError.dataCorrupted {
            // The text is a JSON object (checked above): Foundation says "not valid JSON" of a number
            // its field cannot hold (a count or time past Int64).
            return .failure(EventPayload.Refusal(reason: "not a \(schemaName(subject)) message: a number is out of range"))
        } catch {
            return .failure(EventPayload.Refusal(reason: "not a \(schemaName(subject)) message: \(EventPayload.describe(error))"))
        }
    }

    private static func schemaName(_ subject: String) -> String { subject.hasPrefix("zones/") ? "zone" : subject }

    /// The columns and the machine the payload names.
    private static func readColumns(_ data: Data, subject: String) throws -> (RetainedColumns?, String?) {
        let decoder = JSONDecoder()
        switch subject {
        case "stock":
            let stock = try decoder.decode(StockMessage.self, from: data)
            var seen: Set<String> = []
            for slot in stock.slots {
                try amount(slot.price, "slot \(slot.slot)'s price")
                for (count, name) in [(slot.available, "available"), (slot.stock, "stock"), (slot.capacity, "capacity")] where count < 0 {
                    throw EventPayload.Refusal(reason: "slot \(slot.slot)'s \(name) \(count) is negative")
                }
                guard seen.insert(slot.slot).inserted else { throw EventPayload.Refusal(reason: "slot \(slot.slot) is listed twice") }
                try priceLines(slot.priceLines ?? [], of: slot.slot)
            }
            try priceLists(stock.priceLists ?? [])
            try bands(stock.bands ?? [])
            let slots = stock.slots.map {
                SlotPosition(
                    slot: $0.slot, product: $0.product, price: $0.price, available: Int64($0.available), stock: Int64($0.stock),
                    capacity: Int64($0.capacity), earliestExpiry: $0.earliestExpiry)
            }
            return (.stock(currency: stock.currency, slots: slots), stock.machine)
        case "cash":
            let cash = try decoder.decode(CashMessage.self, from: data)
            let amounts: [(String?, String)] = [
                (cash.coinsIn, "coinsIn"), (cash.sales, "sales"), (cash.refunds, "refunds"), (cash.billsIn, "billsIn"),
                (cash.changePaid, "changePaid"), (cash.unknownPayouts, "unknownPayouts"),
            ]
            for (value, name) in amounts { if let value { try amount(value, name) } }
            let position = CashPosition(
                currency: cash.currency, coinsIn: cash.coinsIn, sales: cash.sales, refunds: cash.refunds, billsIn: cash.billsIn,
                changePaid: cash.changePaid, unknownPayouts: cash.unknownPayouts, exactChangeOnly: cash.exactChangeOnly)
            return (.cash(position), cash.machine)
        case let zoneSubject where zoneSubject.hasPrefix("zones/"):
            let zone = try decoder.decode(ZoneMessage.self, from: data)
            let position = ZonePosition(
                zone: String(zoneSubject.dropFirst("zones/".count)), kind: zone.kind, health: zone.health, temperature: zone.temperature,
                sensorFault: zone.sensorFault, setPoint: zone.setPoint, relayOn: zone.relayOn, maxReached: zone.maxReached, since: zone.since,
                cause: zone.cause, at: zone.at)
            return (.zone(position), zone.machine)
        default:
            return (nil, nil)
        }
    }

    /// docs/mqtt.md's `amount`: an exact decimal string.
    static func amount(_ text: String, _ name: String) throws {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        let valid = (1...2).contains(parts.count) && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
        guard valid else { throw EventPayload.Refusal(reason: "\(name) '\(text)' is not an exact decimal amount") }
    }
}
