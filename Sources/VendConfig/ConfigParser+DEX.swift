import VendSettings
import VendYAML

extension ConfigParser {
    /// Who makes the first DEX handshake, as the file says it.
    enum DEXFirstHandshake: String, CaseIterable {
        case handheld, machine
    }

    /// `dex:` — the machine's DEX port, where route drivers' handhelds and telemeters read the
    /// audit (DEX/UCS or DDCMP) and send prices (DEX/UCS).
    func parseDEX(_ section: MappingReader) -> DEXSettings? {
        let port = section.string("port")
        let hasBaud = section.has("baud")
        let givenBaudRate = hasBaud ? section.int("baud", in: 1_200...115_200) : nil
        let communicationID = section.has("communication_id") ? section.string("communication_id") : Defaults.dexCommunicationID
        let asset = section.has("asset") ? section.string("asset") : nil
        let hasFirst = section.has("first_handshake")
        let first = section.choice("first_handshake", default: DEXFirstHandshake.handheld)
        let linkProtocol = section.choice("protocol", default: DEXLinkProtocol.dexUCS)
        section.finish()
        let baudRate = hasBaud ? givenBaudRate : linkProtocol?.defaultBaudRate
        if linkProtocol == .ddcmp, hasFirst {
            sink.report(
                "first_handshake is for DEX/UCS; with protocol ddcmp the handheld always starts (START): remove the key",
                at: section.value("first_handshake"), path: section.path.key("first_handshake"))
        }
        if let port, !(port.hasPrefix("/") || port.hasPrefix("unix:/")) {
            sink.report(
                "'\(port)' is not a port: give the DEX jack's serial device (/dev/ttyS1, /dev/serial/by-id/…) or unix:/path/to/socket",
                at: section.value("port"), path: section.path.key("port"))
        }
        if let baudRate, !Self.baudRates.contains(baudRate) {
            sink.report(
                "\(baudRate) is not a standard baud rate (\(Self.baudRates.map(String.init).joined(separator: ", ")); DEX/UCS uses 9600, DDCMP 2400)",
                at: section.value("baud"), path: section.path.key("baud"))
        }
        if let communicationID, !Self.isCommunicationID(communicationID) {
            sink.report(
                "'\(communicationID)' is not a communication ID: 3 capital letters (the EVA manufacturer code) and 7 digits, e.g. VDD0000001",
                at: section.value("communication_id"), path: section.path.key("communication_id"))
        }
        guard let port, let baudRate, Self.baudRates.contains(baudRate), let communicationID, Self.isCommunicationID(communicationID),
            let first, let linkProtocol, linkProtocol == .dexUCS || !hasFirst
        else { return nil }
        return DEXSettings(
            port: port, baudRate: baudRate, communicationID: communicationID, assetNumber: asset ?? communicationID,
            machineMakesFirstHandshake: first == .machine, origin: origin(of: section.node, path: section.path),
            linkProtocol: linkProtocol)
    }

    /// DXS01 for DTS 6.x: an EVA manufacturer code of 3 capitals and 7 digits.
    static func isCommunicationID(_ text: String) -> Bool {
        let characters = Array(text.utf8)
        return characters.count == 10 && characters.prefix(3).allSatisfy { (0x41...0x5A).contains($0) }
            && characters.dropFirst(3).allSatisfy { (0x30...0x39).contains($0) }
    }
}
