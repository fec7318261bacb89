import FoundationEssentials
import VendFleetStore
import VendTelemetry

/// vendd's `event` payload (docs/mqtt.md) read as far as the store needs it; the whole JSON
/// object is kept as received.
enum EventPayload {
    /// The fields the store relies on; any others are the event's own business.
    private struct Envelope: Decodable {
        let id: String
        let type: String
        let at: Int64
        let seq: Int64
        let machine: String?
    }

    struct Refusal: Error, Equatable {
        let reason: String
    }

    /// The event, and a warning for something odd but harmless; or why it cannot be stored.
    /// `topicType` is the type its topic names; nil for a backlog's event, whose type must then be
    /// one a topic could name.
    static func decode(_ bytes: ArraySlice<UInt8>, machine: String, type topicType: String?) -> Result<(IncomingEvent, warning: String?), Refusal> {
        guard let text = String(validating: bytes, as: UTF8.self) else { return .failure(Refusal(reason: "the payload is not UTF-8")) }
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: Data(bytes))
        } catch {
            return .failure(Refusal(reason: "not an event (a JSON object with id, type, at and an integer seq): \(Self.describe(error))"))
        }
        guard envelope.seq >= 1 else { return .failure(Refusal(reason: "seq \(envelope.seq): sequences start at 1")) }
        if let topicType {
            guard envelope.type == topicType else {
                return .failure(Refusal(reason: "the payload's type '\(envelope.type)' is not the topic's '\(topicType)'"))
            }
        } else {
            guard !envelope.type.isEmpty, envelope.type.utf8.count <= 64, !envelope.type.contains(where: { "/+#".contains($0) }) else {
                return .failure(Refusal(reason: "the type '\(envelope.type.prefix(80))' is not one a topic level could name"))
            }
        }
        guard !envelope.id.isEmpty, envelope.id.utf8.count <= 64 else { return .failure(Refusal(reason: "the id is empty or too long")) }
        let warning = envelope.machine.flatMap { named in
            named == machine
                ? nil
                : "the payload names machine '\(named)' but arrived on machine '\(machine)''s topic: stored as '\(machine)''s (the topic is the identity)"
        }
        var collection: CollectionColumns?
        if envelope.type == TelemetryEvent.Kind.cashCollected.rawValue {
            do {
                collection = try Self.collection(Data(bytes))
            } catch let refusal as Refusal {
                return .failure(refusal)
            } catch {
                return .failure(Refusal(reason: "not a cash-collected event: \(Self.describe(error))"))
            }
        }
        return .success(
            (
                IncomingEvent(
                    machine: machine, seq: envelope.seq, id: envelope.id, type: envelope.type, at: envelope.at, payload: text,
                    collection: collection), warning
            ))
    }

    /// A `cash-collected` event's collection (docs/mqtt.md): its number, total and counts per
    /// coin and bill, amounts exact decimals and counts not negative.
    static func collection(_ data: Data) throws -> CollectionColumns {
        let event = try JSONDecoder().decode(TelemetryEvent.self, from: data)
        guard let number = event.collection, let total = event.amount else {
            throw Refusal(reason: "a cash-collected event needs its collection number and amount")
        }
        try RetainedPayload.amount(total, "amount")
        var counts: [DenominationCount] = []
        for (kind, denominations) in [(DenominationCount.Kind.coin, event.coins), (.bill, event.bills)] {
            for denomination in denominations ?? [] {
                try RetainedPayload.amount(denomination.value, "a \(kind.rawValue)'s value")
                guard denomination.count >= 0 else {
                    throw Refusal(reason: "\(kind.rawValue) \(denomination.value)'s count \(denomination.count) is negative")
                }
                guard !counts.contains(where: { $0.kind == kind && $0.value == denomination.value }) else {
                    throw Refusal(reason: "\(kind.rawValue) \(denomination.value) is listed twice")
                }
                counts.append(DenominationCount(kind: kind, value: denomination.value, count: Int64(denomination.count)))
            }
        }
        let prefix = "collected by "
        let by = event.reason.map { $0.hasPrefix(prefix) ? String($0.dropFirst(prefix.count)) : $0 }
        return CollectionColumns(
            number: Int64(clamping: number), currency: event.currency, total: total, since: event.since, collectedBy: by, denominations: counts)
    }

    /// A retained message is kept if it is a JSON object; its text as received.
    static func retainedText(_ bytes: [UInt8]) -> Result<String, Refusal> {
        guard let text = String(validating: bytes, as: UTF8.self) else { return .failure(Refusal(reason: "the payload is not UTF-8")) }
        do {
            _ = try JSONDecoder().decode([String: JSONValue].self, from: Data(bytes))
        } catch {
            return .failure(Refusal(reason: "not a JSON object: \(Self.describe(error))"))
        }
        return .success(text)
    }

    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "'\(key.stringValue)' is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "'\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
        case DecodingError.dataCorrupted(let context) where !context.codingPath.isEmpty:
            // Valid JSON whose number its field cannot hold (past Double, say): not "not valid JSON".
            "a number is out of range at '\(context.codingPath.map(\.stringValue).joined(separator: "."))'"
        case DecodingError.dataCorrupted: "not valid JSON"
        default: "\(error)"
        }
    }
}

/// Any JSON value, only to check that a document parses.
private enum JSONValue: Decodable {
    case value

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .value
            return
        }
        if (try? container.decode(Bool.self)) != nil || (try? container.decode(Double.self)) != nil || (try? container.decode(String.self)) != nil {
            self = .value
            return
        }
        if (try? container.decode([JSONValue].self)) != nil || (try? container.decode([String: JSONValue].self)) != nil {
            self = .value
            return
        }
        throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
    }
}
