import Testing
import VendConfig

@Suite struct DEXConfigTests {
    @Test func aValidSectionGivesEverySetting() throws {
        let text =
            BadConfigTests.base
            + "dex:\n  port: /dev/ttyS1\n  baud: 19200\n  communication_id: ACM1234567\n  asset: HALL-3\n  first_handshake: machine\n"
        let config = try ConfigLoader.parse(text, file: "test.yaml")
        let dex = try #require(config.dex)
        #expect(dex.port == "/dev/ttyS1" && dex.baudRate == 19_200 && dex.communicationID == "ACM1234567")
        #expect(dex.assetNumber == "HALL-3" && dex.machineMakesFirstHandshake)
        #expect(dex.origin.description == "dex (test.yaml:44:3)")
        #expect(
            config.summary.hasSuffix("\ndex       /dev/ttyS1 at 19200 8N1 as ACM1234567 (asset HALL-3); the machine bids for the first handshake"))
        let again = try #require(try ConfigLoader.parse(config.resolvedYAML, file: "resolved.yaml").dex)
        #expect(
            [again.port, "\(again.baudRate)", again.communicationID, again.assetNumber, "\(again.machineMakesFirstHandshake)"]
                == [dex.port, "\(dex.baudRate)", dex.communicationID, dex.assetNumber, "\(dex.machineMakesFirstHandshake)"])
    }

    @Test func defaultsAre9600AndTheHandheldStarts() throws {
        let dex = try #require(try ConfigLoader.parse(BadConfigTests.base + "dex:\n  port: unix:/run/vendd/dex.sock\n", file: "test.yaml").dex)
        #expect(dex.baudRate == 9_600 && dex.communicationID == "VDD0000001" && dex.assetNumber == "VDD0000001")
        #expect(!dex.machineMakesFirstHandshake && dex.linkProtocol == .dexUCS)
    }

    @Test func ddcmpStartsAt2400() throws {
        let config = try ConfigLoader.parse(BadConfigTests.base + "dex:\n  port: /dev/ttyUSB0\n  protocol: ddcmp\n", file: "test.yaml")
        let dex = try #require(config.dex)
        #expect(dex.linkProtocol == .ddcmp && dex.baudRate == 2_400)
        #expect(config.summary.hasSuffix("\ndex       /dev/ttyUSB0 at 2400 8N1 as VDD0000001 (asset VDD0000001); DDCMP, the handheld starts"))
        let again = try #require(try ConfigLoader.parse(config.resolvedYAML, file: "resolved.yaml").dex)
        #expect(again.linkProtocol == .ddcmp && again.baudRate == 2_400)
        let faster = try ConfigLoader.parse(BadConfigTests.base + "dex:\n  port: /dev/ttyUSB0\n  protocol: ddcmp\n  baud: 9600\n", file: "test.yaml")
        #expect(faster.dex?.baudRate == 9_600)
    }

    @Test func withoutTheSectionThereIsNoPort() throws {
        #expect(try ConfigLoader.parse(BadConfigTests.base, file: "test.yaml").dex == nil)
    }

    /// Each mistake with its place in the file and what to write instead.
    @Test(arguments: [
        (
            "  port: ttyS1\n",
            "test.yaml:44:9: dex.port: 'ttyS1' is not a port: give the DEX jack's serial device (/dev/ttyS1, /dev/serial/by-id/…) or unix:/path/to/socket"
        ),
        (
            "  port: /dev/ttyS1\n  baud: 9601\n",
            "test.yaml:45:9: dex.baud: 9601 is not a standard baud rate (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200; DEX/UCS uses 9600, DDCMP 2400)"
        ),
        (
            "  port: /dev/ttyS1\n  communication_id: vdd1\n",
            "test.yaml:45:21: dex.communication_id: 'vdd1' is not a communication ID: 3 capital letters (the EVA manufacturer code) and 7 digits, e.g. VDD0000001"
        ),
        (
            "  port: /dev/ttyS1\n  first_handshake: vmd\n",
            "test.yaml:45:20: dex.first_handshake: 'vmd' is not one of 'handheld' or 'machine'"
        ),
        (
            "  port: /dev/ttyS1\n  protocol: ddcpm\n",
            "test.yaml:45:13: dex.protocol: 'ddcpm' is not one of 'dex-ucs' or 'ddcmp'; did you mean 'ddcmp'?"
        ),
        (
            "  port: /dev/ttyS1\n  protocol: ddcmp\n  first_handshake: machine\n",
            "test.yaml:46:20: dex.first_handshake: first_handshake is for DEX/UCS; with protocol ddcmp the handheld always starts (START): remove the key"
        ),
        (
            "  port: /dev/ttyS1\n  buad: 9600\n",
            "test.yaml:45:3: dex: unknown key 'buad'; did you mean 'baud'? (allowed here: port, baud, communication_id, asset, first_handshake, protocol)"
        ),
    ])
    func mistakesAreReportedWithTheirPlace(section: String, message: String) throws {
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(BadConfigTests.base + "dex:\n" + section, file: "test.yaml") }
        #expect(error.diagnostics.map(\.description) == [message])
    }
}
