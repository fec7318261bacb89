import VendSettings
import VendYAML
import VendingCore

/// Which device confirms a customer's age.
public enum AgeVerifierKind: String, Sendable, CaseIterable {
    /// An attendant's button, or an ID scanner's "verified" output, on a GPIO input.
    case gpio
    /// The card reader's own age verification (MDB DRAVP/DRAVS): the customer shows an ID there.
    case reader
}

/// The verifier and where it is.
public enum AgeVerifier: Sendable {
    /// The input the verifier signals on.
    case gpio(InputLineConfig)
    /// The reader in mdb.cashless that checks.
    case reader(CardReader)

    public var kind: AgeVerifierKind {
        switch self {
        case .gpio: .gpio
        case .reader: .reader
        }
    }
}

/// `age_verification:`: the verifier and how long a check waits for it.
public struct AgeVerificationSettings: Sendable {
    public let verifier: AgeVerifier
    public let timeout: Duration

    public var kind: AgeVerifierKind { verifier.kind }
    /// The GPIO verifier's input; nil for a reader.
    public var line: InputLineConfig? {
        if case .gpio(let line) = verifier { line } else { nil }
    }
    /// The reader that checks; nil for a GPIO verifier.
    public var reader: CardReader? {
        if case .reader(let reader) = verifier { reader } else { nil }
    }
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

    /// `age_verification: {verifier: gpio, line: 26, active_low: true, bias: pull-up, timeout_s: 60}`,
    /// or `{verifier: reader, reader: 1, timeout_s: 60}`.
    func parseAgeVerification(_ section: MappingReader, gpio: GPIOSettings?) -> AgeVerificationSettings? {
        let kind: AgeVerifierKind? = section.choice("verifier", default: nil)
        let timeout = section.int("timeout_s", in: 5...600, default: Defaults.ageCheckTimeoutSeconds)
        guard let kind else { return nil }
        switch kind {
        case .gpio:
            guard let line = inputLine(section, gpio: gpio, purpose: .action(.ageVerified)), let timeout else { return nil }
            return AgeVerificationSettings(verifier: .gpio(line), timeout: .seconds(timeout))
        case .reader:
            let reader = section.int("reader", in: 1...2, default: 1).flatMap(CardReader.init(rawValue:))
            section.finish()
            guard let reader, let timeout else { return nil }
            return AgeVerificationSettings(verifier: .reader(reader), timeout: .seconds(timeout))
        }
    }

    /// A reader verifier must be a reader mdb.cashless has (read after it).
    func checkAgeVerifier(_ verification: AgeVerificationSettings, in section: MappingReader, readers: [CardReader]) {
        guard let reader = verification.reader, !readers.contains(reader), let node = section.value("reader") ?? section.value("verifier") else {
            return
        }
        sink.report(
            "the age verifier is \(reader), which mdb.cashless does not have: add { reader: \(reader.rawValue) } there, or use verifier: gpio",
            at: node, path: section.path.key(section.has("reader") ? "reader" : "verifier"))
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
