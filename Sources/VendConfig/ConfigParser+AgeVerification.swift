import VendSettings
import VendYAML
import VendingCore

/// Which device confirms a customer's age. Only `gpio` today; the reader's own verification (MDB
/// DRAVP/DRAVS) would be another kind here, with the same `timeout_s`.
public enum AgeVerifierKind: String, Sendable, CaseIterable {
    /// An attendant's button, or an ID scanner's "verified" output, on a GPIO input.
    case gpio
}

/// `age_verification:`: the verifier and how long a check waits for it.
public struct AgeVerificationSettings: Sendable {
    public let kind: AgeVerifierKind
    /// The input the verifier signals on (`kind` gpio).
    public let line: InputLineConfig
    public let timeout: Duration
}

/// Where each restricted slot's `restricted` is written (the slot's own, or its product's), for
/// the warning when no verifier is configured.
final class RestrictionLog {
    private(set) var places: [(slot: SlotID, age: Int, location: SourceLocation, path: String)] = []
    func record(_ slot: SlotID, age: Int, location: SourceLocation, path: String) { places.append((slot, age, location, path)) }
}

extension ConfigParser {
    /// A product's or slot's `restricted: age 19`: nil when absent, `.some(nil)` when wrong (reported).
    func restriction(_ section: MappingReader) -> Int?? {
        guard section.has("restricted") else { return nil }
        guard let text = section.string("restricted") else { return .some(nil) }
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        if words.count == 2, words[0] == "age", let age = Int(words[1]), (1...99).contains(age) { return .some(age) }
        sink.report(
            "'\(text)' is not a restriction; write 'age N' with N from 1 to 99 (restricted: age 19)",
            at: section.value("restricted"), path: section.path.key("restricted"))
        return .some(nil)
    }

    /// `age_verification: {verifier: gpio, line: 26, active_low: true, bias: pull-up, timeout_s: 60}`.
    func parseAgeVerification(_ section: MappingReader, gpio: GPIOSettings?) -> AgeVerificationSettings? {
        let kind: AgeVerifierKind? = section.choice("verifier", default: nil)
        let timeout = section.int("timeout_s", in: 5...600, default: Defaults.ageCheckTimeoutSeconds)
        let line = inputLine(section, gpio: gpio, purpose: .action(.ageVerified))
        guard let kind, let timeout, let line else { return nil }
        return AgeVerificationSettings(kind: kind, line: line, timeout: .seconds(timeout))
    }

    /// A restricted slot with no verifier is refused at every selection: valid, but said.
    func restrictionWarnings(verifier: AgeVerificationSettings?) -> [ConfigDiagnostic] {
        guard verifier == nil else { return [] }
        return restrictions.places.map { place in
            ConfigDiagnostic(
                location: place.location, path: place.path,
                message:
                    "warning: slot \(place.slot) is restricted to age \(place.age)+ but no age_verification is configured: every selection of it is refused"
            )
        }
    }
}
