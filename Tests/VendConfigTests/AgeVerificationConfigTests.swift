import Foundation
import Testing
import VendConfig
import VendSettings
import VendingCore

/// `restricted: age N` on products and slots, and `age_verification:`: what the core and the
/// panel get, the exact message each mistake gets, and the warning without a verifier.
@Suite struct AgeVerificationConfigTests {
    static let base = """
        machine:
          currency: { code: USD, minor_digits: 2, format: "${amount}" }
          maximum_credit: "5.00"
        gpio:
          chip: gpiochip0
        products:
          - { id: beer, name: Beer, category: [alcohol], restricted: age 19 }
          - { id: water, name: Water, category: [water] }
        slots:
          - id: A1
            product: beer
            price: "1.50"
            capacity: 10
            button: { line: 5 }
            relay: { line: 6 }
          - id: A2
            product: beer
            price: "1.50"
            capacity: 10
            restricted: age 21
            button: { line: 7 }
            relay: { line: 8 }
          - id: A3
            product: water
            price: "1.20"
            capacity: 10
            button: { line: 9 }
            relay: { line: 10 }
        age_verification:
          verifier: gpio
          line: 26
          active_low: true
          bias: pull-up
          timeout_s: 45

        """

    static func parse(_ edits: [(String, String)]) throws -> VenddConfig {
        try ConfigLoader.parse(edited(edits), file: "test.yaml")
    }

    static func edited(_ edits: [(String, String)]) -> String {
        EditedConfig.text(base, edits)
    }

    static func errors(_ edits: [(String, String)]) throws -> [String] {
        try EditedConfig.errors(base, edits)
    }

    @Test func aProductsRestrictionAppliesToItsSlotsAndASlotsOwnOverridesIt() throws {
        let config = try Self.parse([])
        #expect(config.machineSetup.slots.map(\.minimumAge) == [19, 21, nil])
        #expect(config.machineSetup.ageVerification == AgeVerificationSetup(timeout: .seconds(45)))
        #expect(config.ageVerification?.kind == .gpio)
        #expect(config.ageVerification?.line?.line == .offset(26))
        // The verifier's line is a panel input like the buttons.
        #expect(config.buttons.map(\.action) == [.ageVerified])
        #expect(config.warnings.isEmpty)
    }

    /// `check-config --print` writes each slot's resolved restriction and the verifier in its own
    /// section, and reads back to the same machine.
    @Test func theResolvedFileReadsBackTheSame() throws {
        let config = try Self.parse([])
        let resolved = config.resolvedYAML
        #expect(resolved.contains("\nage_verification:\n  verifier: gpio\n  line: 26\n"), "\(resolved)")
        #expect(resolved.contains("restricted: \"age 21\""))
        #expect(!resolved.contains("age-verified"))
        let again = try ConfigLoader.parse(resolved, file: "resolved.yaml")
        #expect(again.machineSetup == config.machineSetup)
        #expect(again.buttons.map(\.action) == [.ageVerified])
    }

    @Test func theSummarySaysTheRestrictedSlotsAndTheVerifier() throws {
        let summary = try Self.parse([]).summary
        #expect(summary.contains("\nbuttons   none\n"), "\(summary)")
        #expect(summary.contains("\nage       restricted A1 19+, A2 21+; verified by gpio on 26 (low, pull-up) within 45 s\n"), "\(summary)")
    }

    @Test func theTimeoutDefaultsToAMinute() throws {
        let config = try Self.parse([("  timeout_s: 45\n", "")])
        #expect(config.machineSetup.ageVerification?.timeout == .seconds(60))
    }

    @Test func aBadAgeIsAnErrorAtItsPlace() throws {
        #expect(
            try Self.errors([("restricted: age 21", "restricted: age 120")]) == [
                "test.yaml:20:17: slots[A2].restricted: 'age 120' is not a restriction; write 'age N' with N from 1 to 99 (restricted: age 19)"
            ])
        let product = try Self.errors([("restricted: age 19", "restricted: 19")])
        #expect(
            product == [
                "test.yaml:7:62: products[beer].restricted: '19' is not a restriction; write 'age N' with N from 1 to 99 (restricted: age 19)"
            ])
    }

    @Test func anUnknownKeyOrVerifierIsAnError() throws {
        #expect(
            try Self.errors([("  timeout_s: 45", "  timeout: 45")]) == [
                "test.yaml:34:3: age_verification: unknown key 'timeout'; did you mean 'timeout_s'? (allowed here: verifier, timeout_s, line, chip, active_low, bias, debounce_ms)"
            ])
        #expect(
            try Self.errors([("verifier: gpio", "verifier: scanner")]) == [
                "test.yaml:30:13: age_verification.verifier: 'scanner' is not one of 'gpio' or 'reader'"
            ])
    }

    /// The card reader's own check (DRAVP/DRAVS): the reader must be one mdb.cashless has.
    static let readerVerifier = """
        mdb:
          port: unix:/run/mdb.sock
          cashless:
            - { reader: 1 }
        age_verification:
          verifier: reader
          reader: 1
          timeout_s: 45

        """

    static func withReader(_ edits: [(String, String)] = []) -> String {
        EditedConfig.text(base.components(separatedBy: "age_verification:")[0] + readerVerifier, edits)
    }

    @Test func aReaderCanBeTheVerifier() throws {
        let config = try ConfigLoader.parse(Self.withReader(), file: "test.yaml")
        #expect(config.ageVerification?.kind == .reader)
        #expect(config.ageVerification?.reader == .first)
        #expect(config.ageVerification?.line == nil)
        // No panel input: the customer shows an ID at the reader.
        #expect(config.buttons.isEmpty)
        #expect(config.machineSetup.ageVerification == AgeVerificationSetup(timeout: .seconds(45)))
        let age = "\nage       restricted A1 19+, A2 21+; verified by cashless #1's own check (the customer shows an ID at the reader) within 45 s\n"
        #expect(config.summary.contains(age), "\(config.summary)")
        let resolved = config.resolvedYAML
        #expect(resolved.contains("\nage_verification:\n  verifier: reader\n  reader: 1\n  timeout_s: 45\n"), "\(resolved)")
        let again = try ConfigLoader.parse(resolved, file: "resolved.yaml")
        #expect(again.ageVerification?.reader == .first)
        #expect(again.machineSetup == config.machineSetup)
    }

    @Test func aReaderVerifierNeedsThatReaderAndNoLine() throws {
        func errors(_ text: String) throws -> [String] {
            try #require(throws: ConfigError.self) { try ConfigLoader.parse(text, file: "test.yaml") }.diagnostics.map(\.description)
        }
        #expect(
            try errors(Self.withReader([("  reader: 1\n  timeout_s", "  reader: 2\n  timeout_s")])) == [
                "test.yaml:35:11: age_verification.reader: the age verifier is cashless #2, which mdb.cashless does not have: add { reader: 2 } there, or use verifier: gpio"
            ])
        #expect(
            try errors(Self.withReader([("  reader: 1\n  timeout_s", "  line: 26\n  timeout_s")])) == [
                "test.yaml:35:3: age_verification: unknown key 'line' (allowed here: verifier, timeout_s, reader)"
            ])
    }

    @Test func theVerifierIsNoButton() throws {
        let text = Self.edited([]) + "buttons:\n  - { action: age-verified, line: 27 }\n"
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(text, file: "test.yaml") }
        #expect(
            error.diagnostics.map(\.description) == [
                "test.yaml:36:15: buttons[age-verified].action: the age verifier is configured under age_verification: (verifier: gpio, line: …), not as a button"
            ])
    }

    @Test func aRestrictedSlotWithoutAVerifierIsAWarningNamingItsLine() throws {
        let text = Self.edited([]).components(separatedBy: "age_verification:")[0]
        let config = try ConfigLoader.parse(text, file: "test.yaml")
        #expect(config.machineSetup.ageVerification == nil)
        #expect(
            config.warnings.map(\.description) == [
                "test.yaml:7:62: products[beer].restricted: warning: slot A1 is restricted to age 19+ but no age_verification is configured: every selection of it is refused",
                "test.yaml:20:17: slots[A2].restricted: warning: slot A2 is restricted to age 21+ but no age_verification is configured: every selection of it is refused",
            ])
    }
}
