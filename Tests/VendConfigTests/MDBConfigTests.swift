import Testing
import VendConfig
import VendSettings

/// The `mdb:` section: what it gives the drivers, and the exact message for each mistake.
@Suite struct MDBConfigTests {
    static let base =
        BadConfigTests.base + """
            mdb:
              port: /dev/ttyACM0
              currency_code: 410
              changer:
                coins:
                  - { type: 0, value: 10 }
                  - { type: 3, value: 500, enabled: false }
              bill_validator:
                escrow: false
                bills:
                  - { type: 1, value: 5000 }

            """

    func diagnostics(_ text: String) -> [String] {
        do {
            _ = try ConfigLoader.parse(text, file: "test.yaml")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func theSectionReachesTheDrivers() throws {
        let config = try ConfigLoader.parse(Self.base, file: "test.yaml")
        let mdb = try #require(config.mdb)
        #expect(mdb.port == "/dev/ttyACM0" && mdb.currencyNumeric == 410 && mdb.pollInterval == .milliseconds(150))
        #expect(mdb.changer?.coins.map(\.type) == [0, 3])
        #expect(mdb.changer?.coins.map(\.enabled) == [true, false])
        #expect(mdb.changer?.coins.last?.origin.description == "mdb.changer.coins[3] (test.yaml:49:17)")
        #expect(mdb.billValidator?.escrow == false)
        #expect(mdb.billValidator?.bills.map(\.value.minorUnits) == [5000])
        #expect(mdb.billValidator?.bills.map(\.highSecurity) == [false])
    }

    @Test func aBillMayBeCheckedAtHighSecurity() throws {
        let text = Self.base.replacingOccurrences(of: "{ type: 1, value: 5000 }", with: "{ type: 1, value: 5000, high_security: true }")
        let config = try ConfigLoader.parse(text, file: "test.yaml")
        #expect(config.mdb?.billValidator?.bills.map(\.highSecurity) == [true])
        let again = try ConfigLoader.parse(config.resolvedYAML, file: "printed.yaml")
        #expect(again.mdb?.billValidator?.bills.map(\.highSecurity) == [true])
    }

    @Test func thePrintedConfigurationReadsBackTheSame() throws {
        let config = try ConfigLoader.parse(Self.base, file: "test.yaml")
        let printed = config.resolvedYAML
        #expect(printed.contains("mdb:"))
        let again = try ConfigLoader.parse(printed, file: "printed.yaml")
        #expect(again.resolvedYAML == printed)
        #expect(again.mdb?.changer?.coins.map(\.value) == config.mdb?.changer?.coins.map(\.value))
        #expect(again.mdb?.billValidator?.escrow == false)
    }

    @Test(arguments: [
        (
            "port: /dev/ttyACM0", "port: ttyACM0",
            "test.yaml:44:9: mdb.port: 'ttyACM0' is not a port: give the MDB interface's device path (/dev/ttyACM0, /dev/serial/by-id/…) or unix:/path/to/socket"
        ),
        (
            "{ type: 3, value: 500, enabled: false }", "{ type: 0, value: 500 }",
            "test.yaml:49:17: mdb.changer.coins[0].type: type 0 is already mapped at line 48; map each type once"
        ),
        (
            "{ type: 1, value: 5000 }", "{ type: 16, value: 5000 }",
            "test.yaml:53:17: mdb.bill_validator.bills[16].type: 16 is out of range (allowed: 0 to 15)"
        ),
        ("poll_interval_ms", "poll_interval_ms", ""),
        (
            "{ type: 1, value: 5000 }", "{ type: 1, value: 5000, high_security: yes }",
            "test.yaml:53:48: mdb.bill_validator.bills[1].high_security: 'yes' is not a yes/no value (write true or false)"
        ),
        (
            "{ type: 0, value: 10 }", "{ type: 0, value: 10, high_security: true }",
            "test.yaml:48:31: mdb.changer.coins[0]: unknown key 'high_security' (allowed here: type, value, enabled)"
        ),
        (
            "currency_code: 410", "currency_code: 410\n  pol_interval_ms: 150",
            "test.yaml:46:3: mdb: unknown key 'pol_interval_ms'; did you mean 'poll_interval_ms'? (allowed here: port, currency_code, poll_interval_ms, changer, bill_validator, cashless)"
        ),
    ])
    func mistakesAreNamedWithTheirPlace(edit: (String, String, String)) {
        let text = Self.base.replacingOccurrences(of: edit.0, with: edit.1)
        let found = diagnostics(text)
        #expect(found == (edit.2.isEmpty ? [] : [edit.2]), "\(found)")
    }

    @Test func aBusWithoutDevicesIsAnError() {
        let text = BadConfigTests.base + "mdb:\n  port: unix:/run/mdb.sock\n"
        #expect(diagnostics(text) == ["test.yaml:44:3: mdb: name at least one MDB device: 'changer', 'bill_validator' and/or 'cashless'"])
    }
}
