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
        let list = try container.decodeIfPresent(Int.self, forKey: .list) ?? PriceListNumber.standardList
        guard PriceListNumber.listRange.contains(list) else {
            throw DecodingError.dataCorruptedError(
                forKey: .list, in: container, debugDescription: "list \(list) is not a price list number (1 to 999)")
        }
        let name = try container.decodeIfPresent(String.self, forKey: .payment) ?? PriceScope.any.rawValue
        guard let payment = PriceScope(rawValue: name) else {
            throw DecodingError.dataCorruptedError(
                forKey: .payment, in: container,
                debugDescription: "unknown payment '\(name)' (known: \(PriceScope.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        if list == .standardList, payment == .any { return .price(slot: slot, amount: amount) }
        return .priceLine(slot: slot, amount: amount, list: list, payment: payment)
    }
}
