import VendSettings
import VendYAML
import VendingCore

extension ConfigParser {
    func parsePayoutDevices(_ nodes: [Node], currency: Currency?, path listPath: ConfigPath) -> [PayoutDeviceConfig] {
        var devices: [PayoutDeviceConfig] = []
        for (index, node) in nodes.enumerated() {
            guard let section = MappingReader(node, path: listPath.element("#\(index + 1)"), sink: sink) else { continue }
            let kind: PayoutDeviceKind? = section.choice("type", default: nil)
            let coin = section.money("coin", currency: currency)
            let address = section.int("address", in: 2...255, default: Defaults.hopperAddress)
            let port = section.string("port", required: false)
            section.finish()
            if let port, !(port.hasPrefix("/") || port.hasPrefix("unix:/")) {
                sink.report(
                    "'\(port)' is not a port: give a device path (/dev/ttyUSB0, /dev/serial/by-id/…) or unix:/path/to/socket, or leave it out to share the coin acceptor's bus",
                    at: section.value("port"), path: section.path.key("port"))
                continue
            }
            guard let kind, let coin, let address else { continue }
            devices.append(
                PayoutDeviceConfig(
                    kind: kind, coin: coin, address: address, port: port,
                    origin: origin(of: node, path: section.path)))
        }
        return devices
    }

    /// `change` needs devices and devices need `change`; each hopper needs a bus, and an address
    /// of its own on it.
    func checkPayout(_ devices: [PayoutDeviceConfig], listNode: Node?, machine: MachineSection, coinAcceptor: CoinAcceptorConfig?, mdbChanger: Bool) {
        let policy = machine.settings?.payout
        if policy == .change, devices.isEmpty, !mdbChanger, listNode?.sequence?.isEmpty ?? true {
            sink.report(
                "payout 'change' needs at least one device under payout_devices (a hopper per coin value) or an mdb.changer",
                at: machine.payoutNode ?? machine.node, path: ConfigPath.root.key("machine").key("payout"))
        }
        if let policy, policy != .change, let listNode {
            sink.report(
                "these devices pay only with machine.payout: change (it is '\(policy.rawValue)'); set it, or remove them",
                at: listNode, path: ConfigPath.root.key("payout_devices"))
        }
        var taken: [String: [Int: String]] = [:]
        if let coinAcceptor, let address = coinAcceptor.cctalk?.address {
            taken[coinAcceptor.port] = [
                address: "coin_acceptor", coinAcceptor.cctalk?.hostAddress ?? 1: "the host (coin_acceptor.cctalk.host_address)",
            ]
        }
        for device in devices {
            guard let port = device.port(sharing: coinAcceptor) else {
                sink.report(
                    "this hopper has no port and there is no coin acceptor whose bus it could share: give 'port'",
                    at: device.origin.location, path: device.origin.path)
                continue
            }
            // No `port`, or the acceptor's: a bus only a ccTalk acceptor can share.
            if port == coinAcceptor?.port, coinAcceptor?.protocol != .cctalk {
                sink.report(
                    "the coin acceptor speaks '\(coinAcceptor?.protocol.rawValue ?? "")', not ccTalk: give the hopper a 'port' of its own",
                    at: device.origin.location, path: device.origin.path)
                continue
            }
            if let user = taken[port]?[device.address] {
                sink.report(
                    "address \(device.address) on \(port) is already \(user); give each device on a ccTalk bus its own address",
                    at: device.origin.location, path: device.origin.path + ".address")
                continue
            }
            taken[port, default: [1: "the host"]][device.address] = device.origin.path
        }
    }
}
