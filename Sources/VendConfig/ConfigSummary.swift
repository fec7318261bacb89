import VendSettings
import VendText
import VendingCore

extension VenddConfig {
    /// One screen for `vendd check-config`: what the machine will do with this file.
    public var summary: String {
        let format = machine.moneyFormat
        var lines = ["\(file): configuration OK", ""]
        lines.append(
            "machine   \(machine.name): \(machine.currency.code), shown as \(format.string(for: Money(minorUnits: 123_456, currency: machine.currency)))"
                + ", maximum credit \(format.string(for: machine.maximumCredit))")
        lines.append(
            "          vend timeout \(machine.vendTimeout.wholeMilliseconds) ms, unknown outcome: \(machine.unknownOutcomePolicy.rawValue)"
                + ", failed vend: \(machine.failedVendPolicy.rawValue), payout: \(machine.payout.rawValue)")
        lines.append("gpio      chip \(gpio.chip), debounce \(gpio.debounce.wholeMilliseconds) ms")
        let hot = products.filter(\.isHot).count
        lines.append("products  \(products.count) (\(hot) hot)")
        lines.append("slots     \(slots.count)")
        var table = TextTable([.left, .left, .right, .right, .left, .left, .left])
        table.add(["slot", "product", "price", "cap", "button", "drive", "drop sensor"])
        for slot in slots {
            let product = products.first { $0.id == slot.setup.product }?.name ?? slot.setup.product.rawValue
            let relay: String
            switch slot.drive {
            case .relay(let line):
                relay = "\(line.line.line)\(line.line.activeLow ? " low" : "") \(line.pulse.wholeMilliseconds)/\(line.maximumOn.wholeMilliseconds) ms"
            case .spiral(let spiral):
                let motor =
                    switch spiral.power {
                    case .line(let line): "spiral \(line.chip.map { "\($0):" } ?? "")\(line.line)"
                    case .matrix(let row, let column): "matrix r\(row + 1)c\(column + 1)"
                    }
                relay = "\(motor), home \(describe(spiral.home))"
            }
            let drop = slot.dropSensor.map { "\(describe($0.input)), \($0.window.wholeMilliseconds) ms" } ?? "-"
            table.add([
                slot.id.rawValue, product, format.string(for: slot.setup.price), "\(slot.setup.capacity)",
                describe(slot.button), relay, drop,
            ])
        }
        lines += table.render(indent: "  ")
        if let pricing = pricingSummary { lines.append("pricing   " + pricing) }
        let buttonList = buttons.filter { $0.action != .ageVerified }.map { "\($0.action.rawValue) on \(describe($0.line))" }
        lines.append("buttons   " + (buttonList.isEmpty ? "none" : buttonList.joined(separator: ", ")))
        if let age = ageSummary { lines.append("age       " + age) }
        if let coins = coinAcceptor {
            var settings = "\(coins.protocol.rawValue) on \(coins.port) at \(coins.baudRate) baud"
            if let cctalk = coins.cctalk {
                settings +=
                    "; address \(cctalk.address), \(cctalk.checksum.rawValue), echo \(cctalk.echo ? "on" : "off"), poll \(cctalk.pollInterval.wholeMilliseconds) ms"
            }
            lines.append("coins     " + settings)
            var channels = TextTable([.right, .right, .left])
            channels.add(["channel", "value", ""])
            for channel in coins.channels {
                channels.add(["\(channel.channel)", format.string(for: channel.value), channel.enabled ? "enabled" : "inhibited"])
            }
            lines += channels.render(indent: "  ")
        } else {
            lines.append("coins     no coin acceptor")
        }
        if let mdb {
            let devices = [
                mdb.changer.map { "changer (\($0.coins.count) coin types)" },
                mdb.billValidator.map { "bill validator (\($0.bills.count) bill types, escrow \($0.escrow ? "on" : "off"))" },
            ]
            let readers = mdb.cashless.map { reader in
                "\(reader.reader) (\(reader.selectionFirst ? "selection first when it offers it" : "card first"), session time-out \(reader.sessionTimeout.wholeMilliseconds / 1000) s)"
            }
            lines.append(
                "mdb       \((devices.compactMap { $0 } + readers).joined(separator: ", ")) on \(mdb.port), poll \(mdb.pollInterval.wholeMilliseconds) ms\(mdb.currencyNumeric.map { ", devices must report ISO 4217 \($0)" } ?? "")"
            )
        }
        for device in payoutDevices {
            let port = device.port ?? "the coin acceptor's bus"
            lines.append("payout    \(device.kind.rawValue) of \(format.string(for: device.coin)) coins, address \(device.address) on \(port)")
        }
        lines.append("state     \(stateDirectory)")
        lines.append("control   \(control.socketPath) (group \(control.group))")
        if let mqtt {
            let commands =
                mqtt.commands.isEmpty ? "none" : MQTTSettings.Command.allCases.filter(mqtt.commands.contains).map(\.rawValue).joined(separator: ", ")
            let published = MQTTSettings.Publication.allCases.filter(mqtt.publish.contains).map(\.rawValue).joined(separator: ", ")
            lines.append("mqtt      \(mqtt.broker.url) as \(mqtt.machineTopic); publishes \(published); commands: \(commands)")
        }
        if let dex {
            let first =
                dex.linkProtocol == .ddcmp
                ? "DDCMP, the handheld starts" : dex.machineMakesFirstHandshake ? "the machine bids for the first handshake" : "the handheld starts"
            lines.append("dex       \(dex.port) at \(dex.baudRate) 8N1 as \(dex.communicationID) (asset \(dex.assetNumber)); \(first)")
        }
        return lines.joined(separator: "\n")
    }

    /// The lists, how many price lines name each, the bands with their zone, and the card lists.
    private var pricingSummary: String? {
        let pricing = machineSetup.pricing
        let allLines = slots.flatMap(\.setup.priceLines) + products.flatMap(\.priceLines)
        guard !allLines.isEmpty || !pricing.lists.isEmpty || !pricing.bands.isEmpty else { return nil }
        var parts = [
            "lists: 1 (the slots' prices)"
                + pricing.lists.sorted { $0.key < $1.key }.map { list in
                    let count = allLines.filter { $0.list == list.key }.count
                    return ", \(list.key) \(list.value) (\(count) price\(count == 1 ? "" : "s"))"
                }.joined()
        ]
        if !pricing.bands.isEmpty {
            parts.append("bands in \(pricing.timeZone.name): " + pricing.bands.map(\.description).joined(separator: ", "))
        }
        for (reader, lists) in pricing.cardLists.sorted(by: { $0.key < $1.key }) {
            parts.append("\(reader) card lists " + lists.sorted { $0.key < $1.key }.map { "\($0.key)→\($0.value)" }.joined(separator: ", "))
        }
        return parts.joined(separator: "; ")
    }

    /// The restricted slots and their verifier; nil when no slot is restricted and none is configured.
    private var ageSummary: String? {
        let restricted = slots.compactMap { slot in slot.setup.minimumAge.map { "\(slot.id) \($0)+" } }
        guard !restricted.isEmpty || ageVerification != nil else { return nil }
        let verifier =
            ageVerification.map { verification in
                let by =
                    switch verification.verifier {
                    case .gpio(let line): "gpio on \(describe(line))"
                    case .reader(let reader): "\(reader)'s own check (the customer shows an ID at the reader)"
                    }
                return "verified by \(by) within \(verification.timeout.components.seconds) s"
            }
            ?? "no verifier: refused"
        return (restricted.isEmpty ? "no restricted slots" : "restricted " + restricted.joined(separator: ", ")) + "; " + verifier
    }

    private func describe(_ line: InputLineConfig) -> String {
        var flags: [String] = []
        if line.activeLow { flags.append("low") }
        if line.bias != .asIs { flags.append(line.bias.rawValue) }
        let name = "\(line.chip.map { "\($0):" } ?? "")\(line.line)"
        return flags.isEmpty ? name : "\(name) (\(flags.joined(separator: ", ")))"
    }
}
