import VendSettings
import VendYAML
import VendingCore

extension ConfigParser {
    static let baudRates = [1_200, 2_400, 4_800, 9_600, 19_200, 38_400, 57_600, 115_200]

    func parseCoinAcceptor(_ section: MappingReader, currency: Currency?) -> CoinAcceptorConfig? {
        let port = section.string("port")
        let coinProtocol: CoinProtocol? = section.choice("protocol", default: nil)
        let baudRate = section.int("baud", in: 1_200...115_200, default: Defaults.baudRate)
        let cctalkSection = section.nested("cctalk", required: false)
        let cctalk = cctalkSection.flatMap(parseCcTalk)
        // Unknown protocol: the widest range, so a misspelt protocol is the only error.
        let channelRange = coinProtocol == .cctalk ? 1...16 : 0...255
        let channels = section.list("channels").map { parseChannels($0, range: channelRange, currency: currency, path: section.path.key("channels")) }
        section.finish()

        if let port, !(port.hasPrefix("/") || port.hasPrefix("unix:/")) {
            sink.report(
                "'\(port)' is not a port: give a device path (/dev/ttyUSB0, /dev/serial/by-id/…) or unix:/path/to/socket",
                at: section.value("port"), path: section.path.key("port"))
        }
        if let baudRate, !Self.baudRates.contains(baudRate) {
            sink.report(
                "\(baudRate) is not a standard baud rate (\(Self.baudRates.map(String.init).joined(separator: ", ")); ccTalk uses 9600)",
                at: section.value("baud"), path: section.path.key("baud"))
        }
        if coinProtocol == .bytecode, cctalkSection != nil {
            sink.report(
                "the 'cctalk' settings apply only to protocol 'cctalk'; remove them or change the protocol",
                at: section.value("cctalk"), path: section.path.key("cctalk"))
        }
        if section.value("channels")?.sequence?.isEmpty == true {
            sink.report("list at least one coin channel and its value", at: section.value("channels"), path: section.path.key("channels"))
        }
        guard let port, let coinProtocol, let baudRate, let channels, !channels.isEmpty else { return nil }
        let settings: CcTalkSettings? =
            coinProtocol == .cctalk
            ? (cctalkSection == nil ? Self.defaultCcTalk : cctalk) : nil
        if coinProtocol == .cctalk, settings == nil { return nil }
        return CoinAcceptorConfig(port: port, baudRate: baudRate, protocol: coinProtocol, cctalk: settings, channels: channels)
    }

    static let defaultCcTalk = CcTalkSettings(
        address: Defaults.ccTalkAddress, hostAddress: Defaults.ccTalkHostAddress, checksum: .simple8, echo: false,
        pollInterval: .milliseconds(Defaults.pollIntervalMilliseconds))

    private func parseCcTalk(_ section: MappingReader) -> CcTalkSettings? {
        let address = section.int("address", in: 1...255, default: Defaults.ccTalkAddress)
        let hostAddress = section.int("host_address", in: 1...255, default: Defaults.ccTalkHostAddress)
        let checksum = section.choice("checksum", default: CcTalkChecksum.simple8)
        let echo = section.bool("echo", default: false)
        let poll = section.milliseconds("poll_interval_ms", in: 50...1_000, default: Defaults.pollIntervalMilliseconds)
        section.finish()
        if let address, address == hostAddress {
            sink.report(
                "the acceptor's address (\(address)) must differ from the host's (host_address)",
                at: section.value("address") ?? section.node, path: section.path.key("address"))
            return nil
        }
        guard let address, let hostAddress, let checksum, let echo, let poll else { return nil }
        return CcTalkSettings(address: address, hostAddress: hostAddress, checksum: checksum, echo: echo, pollInterval: poll)
    }

    private func parseChannels(_ nodes: [Node], range: ClosedRange<Int>, currency: Currency?, path listPath: ConfigPath) -> [CoinChannel] {
        var channels: [CoinChannel] = []
        var seen: [Int: Node] = [:]
        for (index, node) in nodes.enumerated() {
            let label = node.mapping.flatMap { labelValue(in: $0, key: "channel") } ?? "#\(index + 1)"
            guard let section = MappingReader(node, path: listPath.element(label), sink: sink) else { continue }
            let channel = section.int("channel", in: range)
            let value = section.money("value", currency: currency)
            let enabled = section.bool("enabled", default: true)
            section.finish()
            if let channel, let first = seen[channel] {
                sink.report(
                    "channel \(channel) is already mapped at line \(first.mark.line); map each channel once",
                    at: section.value("channel"), path: section.path.key("channel"))
                continue
            }
            if let channel { seen[channel] = node }
            guard let channel, let value, let enabled, let channelNode = section.value("channel") else { continue }
            channels.append(
                CoinChannel(
                    channel: channel, value: value, enabled: enabled,
                    origin: origin(of: channelNode, path: section.path)))
        }
        return channels
    }
}
