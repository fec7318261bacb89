import FoundationEssentials
import VendingCore

extension ControlRequest {
    /// One request line as a client sent it (without its newline). A line that is not a valid
    /// request gets an error naming what is wrong; the connection and the machine carry on.
    /// Fuzzed by Tests/Fuzz/fuzz-control.
    public static func decode(line: String) -> Result<ControlRequest, ControlError> {
        let data = Data(line.utf8)
        struct VersionOnly: Decodable { let v: Int }
        if let version = try? JSONDecoder().decode(VersionOnly.self, from: data), version.v != ControlProtocol.version {
            return .failure(
                ControlError(
                    .unsupportedVersion,
                    "protocol version \(version.v) is not supported; this vendd speaks version \(ControlProtocol.version)"))
        }
        do {
            return .success(try JSONDecoder().decode(ControlRequest.self, from: data))
        } catch let DecodingError.dataCorrupted(context) {
            return .failure(
                ControlError(
                    .badRequest,
                    context.codingPath.isEmpty
                        ? #"not a JSON request line (expected {"v":1,"op":"status"} and the like)"#
                        : context.debugDescription))
        } catch let DecodingError.keyNotFound(key, _) {
            return .failure(ControlError(.badRequest, "missing '\(key.stringValue)'"))
        } catch let DecodingError.typeMismatch(_, context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            return .failure(ControlError(.badRequest, "'\(key)' has the wrong type"))
        } catch {
            return .failure(ControlError(.badRequest, "not a JSON request line: \(error)"))
        }
    }

    /// `price`: list 1 for every payment unless `list` or `payment` says another line; a list
    /// number out of EVA-DTS's range or an unknown payment is refused here, naming what is allowed.
    static func price(_ container: KeyedDecodingContainer<Key>) throws -> ControlCommand {
        let slot = try container.decode(String.self, forKey: .slot)
        let amount = try container.decode(String.self, forKey: .amount)
        let named = PriceLineName.read(
            list: try container.decodeIfPresent(Int.self, forKey: .list), payment: try container.decodeIfPresent(String.self, forKey: .payment))
        switch named {
        case .failure(.list(let reason)): throw DecodingError.dataCorruptedError(forKey: .list, in: container, debugDescription: reason)
        case .failure(.payment(let reason)): throw DecodingError.dataCorruptedError(forKey: .payment, in: container, debugDescription: reason)
        case .success(let line) where line.list == .standardList && line.scope == .any: return .price(slot: slot, amount: amount)
        case .success(let line): return .priceLine(slot: slot, amount: amount, list: line.list, payment: line.scope)
        }
    }
}

/// The price line a request names: `list` (absent: 1) within EVA-DTS's range, `payment`
/// (absent: every payment) one vendd knows. The control socket and the fleet's `price` command
/// read them alike; whether the machine has the list is the core's to say.
public enum PriceLineName {
    /// Why a list or payment is refused, naming what is allowed.
    public enum Problem: Error, Equatable {
        case list(String)
        case payment(String)

        public var reason: String {
            switch self {
            case .list(let reason), .payment(let reason): reason
            }
        }
    }

    public static func read(list: Int?, payment: String?) -> Result<(list: PriceListNumber, scope: PriceScope), Problem> {
        let list = list ?? PriceListNumber.standardList
        guard PriceListNumber.listRange.contains(list) else { return .failure(.list("list \(list) is not a price list number (1 to 999)")) }
        let name = payment ?? PriceScope.any.rawValue
        guard let scope = PriceScope(rawValue: name) else {
            return .failure(.payment("unknown payment '\(name)' (known: \(PriceScope.allCases.map(\.rawValue).joined(separator: ", ")))"))
        }
        return .success((list, scope))
    }
}
