import VendClimate
import VendSettings
import VendText
import VendingCore

extension VenddConfig {
    /// The configuration with every default filled in, as a file `vendd` reads back to the same
    /// configuration: `vendd check-config --print`.
    public var resolvedYAML: String {
        var out = YAMLWriter()
        out.section("machine") { out in
            out.field("name", quoted: machine.name)
            out.section("currency") { out in
                out.field("code", quoted: machine.currency.code)
                out.field("minor_digits", machine.currency.minorDigits)
                out.field("format", quoted: machine.moneyFormat.template)
                out.field("grouping_separator", quoted: machine.moneyFormat.groupingSeparator)
                out.field("decimal_separator", quoted: machine.moneyFormat.decimalSeparator)
            }
            out.field("maximum_credit", quoted: machine.maximumCredit.decimalString)
            out.field("vend_timeout_ms", machine.vendTimeout.wholeMilliseconds)
            out.field("unknown_outcome", machine.unknownOutcomePolicy.rawValue)
            out.field("failed_vend", machine.failedVendPolicy.rawValue)
            out.field("payout", machine.payout.rawValue)
            out.field("history_limit", machine.historyLimit)
        }
        out.section("gpio") { out in
            out.field("chip", quoted: gpio.chip)
            out.field("debounce_ms", gpio.debounce.wholeMilliseconds)
        }
        out.list("products", products) { out, product in
            out.field("id", quoted: product.id.rawValue)
            out.field("name", quoted: product.name)
            out.field("category", "[" + product.category.components.map(YAMLWriter.quote).joined(separator: ", ") + "]")
            out.field("hot", product.isHot)
            if let days = product.shelfLifeDays { out.field("shelf_life_days", days) }
            // Only as written: its default depends on the slots that hold the product.
            if let policy = product.expiryPolicy { out.field("expired", policy.rawValue) }
            out.field("tags", "[" + product.tags.map(YAMLWriter.quote).joined(separator: ", ") + "]")
            if let picture = productFaces[product.id.rawValue]?.picture { out.field("picture", quoted: picture) }
            if let shortName = productFaces[product.id.rawValue]?.shortName { out.field("short_name", quoted: shortName) }
            if !product.priceLines.isEmpty { out.field("prices", Self.inline(product.priceLines)) }
        }
        out.list("slots", slots) { out, slot in
            out.field("id", quoted: slot.id.rawValue)
            out.field("product", quoted: slot.setup.product.rawValue)
            out.field("price", quoted: slot.setup.price.decimalString)
            if !slot.setup.priceLines.isEmpty { out.field("prices", Self.inline(slot.setup.priceLines)) }
            out.field("capacity", slot.setup.capacity)
            // Each slot's own, its product's resolved into it.
            if let age = slot.setup.minimumAge { out.field("restricted", quoted: "age \(age)") }
            out.field("button", Self.inline(slot.button))
            switch slot.drive {
            case .relay(let relay):
                out.field(
                    "relay",
                    "{line: \(Self.line(relay.line.line)),\(Self.chip(relay.line.chip)) active_low: \(relay.line.activeLow), "
                        + "pulse_ms: \(relay.pulse.wholeMilliseconds), max_on_ms: \(relay.maximumOn.wholeMilliseconds)}")
            case .spiral(let spiral):
                switch spiral.power {
                case .line(let motor):
                    out.field("drive", "spiral")
                    out.field("motor", Self.inline(motor))
                case .matrix(let row, let column):
                    out.field("drive", "matrix")
                    out.field("motor", "{row: \(row + 1), column: \(column + 1)}")
                }
                out.field("home", Self.inline(spiral.home))
            }
            if let drop = slot.dropSensor {
                out.field("drop_sensor", String(Self.inline(drop.input).dropLast()) + ", window_ms: \(drop.window.wholeMilliseconds)}")
            }
            if let zone = slot.zone {
                out.field("zone", quoted: zone.rawValue)
                out.field("perishable", slot.setup.healthZone != nil)
            }
        }
        out.list("zones", zones) { out, zone in Self.write(zone, to: &out) }
        Self.write(machineSetup.pricing, to: &out)
        if let timing = slots.lazy.compactMap(\.spiral).first?.timing {
            out.section("motors") { out in
                if let motorMatrix {
                    out.list("rows", motorMatrix.rows) { out, row in Self.fields(of: row, into: &out) }
                    out.list("columns", motorMatrix.columns) { out, column in Self.fields(of: column, into: &out) }
                }
                out.field("departure_ms", timing.departureLimit.wholeMilliseconds)
                out.field("turn_ms", timing.turnLimit.wholeMilliseconds)
                out.field("cam_debounce_ms", timing.camDebounce.wholeMilliseconds)
            }
        }
        if let verification = ageVerification {
            out.section("age_verification") { out in
                out.field("verifier", verification.kind.rawValue)
                switch verification.verifier {
                case .gpio(let line): Self.fields(of: line, into: &out)
                case .reader(let reader): out.field("reader", reader.rawValue)
                }
                out.field("timeout_s", verification.timeout.components.seconds)
            }
        }
        // The age verifier's line is written under age_verification.
        out.list("buttons", buttons.filter { $0.action != .ageVerified }) { out, button in
            out.field("action", button.action.rawValue)
            Self.fields(of: button.line, into: &out)
        }
        if let coins = coinAcceptor {
            out.section("coin_acceptor") { out in
                out.field("port", quoted: coins.port)
                out.field("protocol", coins.protocol.rawValue)
                out.field("baud", coins.baudRate)
                if let cctalk = coins.cctalk {
                    out.section("cctalk") { out in
                        out.field("address", cctalk.address)
                        out.field("host_address", cctalk.hostAddress)
                        out.field("checksum", cctalk.checksum.rawValue)
                        out.field("echo", cctalk.echo)
                        out.field("poll_interval_ms", cctalk.pollInterval.wholeMilliseconds)
                    }
                }
                out.list("channels", coins.channels) { out, channel in
                    out.field("channel", channel.channel)
                    out.field("value", quoted: channel.value.decimalString)
                    out.field("enabled", channel.enabled)
                }
            }
        }
        if !payoutDevices.isEmpty {
            out.list("payout_devices", payoutDevices) { out, device in
                out.field("type", device.kind.rawValue)
                out.field("coin", quoted: device.coin.decimalString)
                out.field("address", device.address)
                if let port = device.port { out.field("port", quoted: port) }
            }
        }
        if let mdb {
            out.section("mdb") { out in
                out.field("port", quoted: mdb.port)
                if let code = mdb.currencyNumeric { out.field("currency_code", code) }
                out.field("poll_interval_ms", mdb.pollInterval.wholeMilliseconds)
                let rows: (inout YAMLWriter, MDBDenomination) -> Void = { out, row in
                    out.field("type", row.type)
                    out.field("value", quoted: row.value.decimalString)
                    out.field("enabled", row.enabled)
                }
                if let changer = mdb.changer {
                    out.section("changer") { out in
                        out.field("payout_stall_ms", changer.payoutStallLimit.wholeMilliseconds)
                        out.list("coins", changer.coins, rows)
                    }
                }
                if let bills = mdb.billValidator {
                    out.section("bill_validator") { out in
                        out.field("escrow", bills.escrow)
                        out.list("bills", bills.bills) { out, row in
                            rows(&out, row)
                            out.field("high_security", row.highSecurity)
                        }
                    }
                }
                if !mdb.cashless.isEmpty {
                    out.list("cashless", mdb.cashless) { out, reader in
                        out.field("reader", reader.reader.rawValue)
                        out.field("selection_first", reader.selectionFirst)
                        out.field("session_timeout_ms", reader.sessionTimeout.wholeMilliseconds)
                    }
                }
            }
        }
        out.section("state") { out in out.field("directory", quoted: stateDirectory) }
        out.section("control") { out in
            out.field("socket", quoted: control.socketPath)
            out.field("group", quoted: control.group)
            out.field("customer_group", quoted: control.customerGroup)
        }
        out.section("display") { out in
            out.field("language", display.language.rawValue)
            if let kiosk = display.kiosk {
                out.section("kiosk") { out in
                    out.field("address", quoted: kiosk.address)
                    out.field("port", kiosk.port)
                }
            } else {
                out.field("kiosk", "off")
            }
            if let lcd = display.lcd {
                out.section("lcd") { out in
                    out.field("bus", quoted: lcd.bus)
                    out.field("address", "0x" + String(lcd.address, radix: 16, uppercase: true))
                    out.field("size", lcd.size.rawValue)
                }
            }
        }
        if let mqtt {
            out.section("mqtt") { out in
                out.field("broker", quoted: mqtt.broker.url)
                out.field("allow_plaintext", !mqtt.broker.tls)
                out.field("machine_id", quoted: mqtt.machineID)
                if let file = mqtt.credentialsFile { out.field("credentials_file", quoted: file) }
                if let file = mqtt.caFile { out.field("ca_file", quoted: file) }
                out.field("topic_prefix", quoted: mqtt.topicPrefix)
                out.field(
                    "publish", "[" + MQTTSettings.Publication.allCases.filter(mqtt.publish.contains).map(\.rawValue).joined(separator: ", ") + "]")
                out.field(
                    "commands", "[" + MQTTSettings.Command.allCases.filter(mqtt.commands.contains).map(\.rawValue).joined(separator: ", ") + "]")
                out.field("outbox_days", mqtt.outboxDays)
                out.field("keep_until_stored", mqtt.keepUntilStored)
            }
        }
        if let dex {
            out.section("dex") { out in
                out.field("port", quoted: dex.port)
                out.field("baud", dex.baudRate)
                out.field("communication_id", quoted: dex.communicationID)
                out.field("asset", quoted: dex.assetNumber)
                out.field("protocol", dex.linkProtocol.rawValue)
                if dex.linkProtocol == .dexUCS { out.field("first_handshake", dex.machineMakesFirstHandshake ? "machine" : "handheld") }
            }
        }
        return out.text
    }

    private static func write(_ zone: ZoneConfig, to out: inout YAMLWriter) {
        func seconds(_ duration: Duration) -> Int64 { duration.components.seconds }
        let settings = zone.settings
        out.field("id", quoted: settings.id.rawValue)
        out.field("kind", settings.kind.rawValue)
        let sensors = zone.sensors.map { sensor in
            switch sensor {
            case .w1(let id): "{w1: \(YAMLWriter.quote(id))}"
            case .hwmon(let chip, let device, let input):
                "{hwmon: \(YAMLWriter.quote(chip))" + (device.map { ", device: \(YAMLWriter.quote($0))" } ?? "")
                    + ", input: \(YAMLWriter.quote(input))}"
            }
        }
        out.field("sensors", "[" + sensors.joined(separator: ", ") + "]")
        out.field("read_interval_s", seconds(zone.readInterval))
        if let thermostat = settings.thermostat {
            out.field("set_point", thermostat.setPoint.decimalCelsiusExact)
            out.field("differential", thermostat.differential.decimalCelsiusExact)
            out.field("min_on_s", seconds(thermostat.minimumOn))
            out.field("min_off_s", seconds(thermostat.minimumOff))
            out.field("start_delay_s", seconds(thermostat.startDelay))
        }
        if let relay = zone.relay { out.field("relay", inline(relay)) }
        if settings.health != nil { out.field("lock", zone.lock.rawValue) }
        if let defrost = settings.defrost {
            out.section("defrost") { out in
                out.field("method", defrost.method.rawValue)
                out.field("interval_s", seconds(defrost.interval))
                out.field("termination", defrost.termination.decimalCelsiusExact)
                out.field("max_duration_s", seconds(defrost.maximumDuration))
                out.field("drip_s", seconds(defrost.drip))
                if let heater = zone.defrostHeater { out.field("heater", inline(heater)) }
            }
        }
        if let health = settings.health {
            out.section("health") { out in
                out.field("limit", health.limit.decimalCelsiusExact)
                out.field("trip_s", seconds(health.tripTime))
                out.field("recovery_after_door_s", seconds(health.recoveryAfterDoor))
                out.field("recovery_after_defrost_s", seconds(health.recoveryAfterDefrost))
                out.field("recovery_after_power_on_s", seconds(health.recoveryAfterPowerOn))
                out.field("sensor_grace_s", seconds(health.sensorGrace))
            }
        }
    }

    private static func inline(_ lines: [PriceLine]) -> String {
        "["
            + lines.map { "{list: \($0.list), payment: \($0.scope.rawValue), price: \(YAMLWriter.quote($0.price.decimalString))}" }
            .joined(separator: ", ") + "]"
    }

    /// Only when the file had it: a zone read from the system's file (a path) is left to it again.
    private static func write(_ pricing: PricingSetup, to out: inout YAMLWriter) {
        let zoneName = pricing.timeZone.name.hasPrefix("/") ? nil : pricing.timeZone.name
        guard !pricing.lists.isEmpty || !pricing.bands.isEmpty || !pricing.cardLists.isEmpty || zoneName != TimeZoneRules.utc.name
        else { return }
        out.section("pricing") { out in
            if let zoneName { out.field("time_zone", quoted: zoneName) }
            out.list("lists", pricing.lists.sorted { $0.key < $1.key }) { out, list in
                out.field("list", list.key)
                out.field("name", quoted: list.value)
            }
            out.list("bands", pricing.bands) { out, band in
                out.field("list", band.list)
                out.field("days", "[" + band.days.sorted().map(\.description).joined(separator: ", ") + "]")
                out.field("from", quoted: LocalTime.clock(band.from))
                out.field("to", quoted: LocalTime.clock(band.to))
            }
            let routes = pricing.cardLists.sorted { $0.key < $1.key }.flatMap { reader, lists in
                lists.sorted { $0.key < $1.key }.map { (reader, $0.key, $0.value) }
            }
            out.list("card_lists", routes) { out, route in
                out.field("reader", route.0.rawValue)
                out.field("card", route.1)
                out.field("list", route.2)
            }
        }
    }

    private static func line(_ reference: LineReference) -> String {
        switch reference {
        case .offset(let offset): "\(offset)"
        case .name(let name): YAMLWriter.quote(name)
        }
    }

    private static func inline(_ input: InputLineConfig) -> String {
        "{line: \(line(input.line)),\(chip(input.chip)) active_low: \(input.activeLow), bias: \(input.bias.rawValue), debounce_ms: \(input.debounce.wholeMilliseconds)}"
    }

    /// An input's keys, one a line (`buttons:`, `age_verification:`).
    private static func fields(of input: InputLineConfig, into out: inout YAMLWriter) {
        out.field("line", Self.line(input.line))
        if let chip = input.chip { out.field("chip", quoted: chip) }
        out.field("active_low", input.activeLow)
        out.field("bias", input.bias.rawValue)
        out.field("debounce_ms", input.debounce.wholeMilliseconds)
    }

    private static func inline(_ output: OutputLineConfig) -> String {
        "{line: \(line(output.line)),\(chip(output.chip)) active_low: \(output.activeLow)}"
    }

    private static func fields(of output: OutputLineConfig, into out: inout YAMLWriter) {
        out.field("line", line(output.line))
        if let chip = output.chip { out.field("chip", quoted: chip) }
        out.field("active_low", output.activeLow)
    }

    /// ` chip: "…",` for a line on another chip than gpio.chip; nothing otherwise.
    private static func chip(_ chip: String?) -> String {
        chip.map { " chip: \(YAMLWriter.quote($0))," } ?? ""
    }
}

/// Just enough YAML writing for the resolved configuration: block mappings and lists, with every
/// free-text value double-quoted so nothing is reinterpreted on the way back in.
struct YAMLWriter {
    private(set) var text = ""
    private var indent = ""
    private var pendingListMarker = false

    static func quote(_ value: String) -> String {
        "\"" + value.replacingScalars(["\"": "\\\"", "\\": "\\\\", "\n": "\\n", "\t": "\\t"]) + "\""
    }

    mutating func field(_ key: String, _ value: some CustomStringConvertible) {
        let prefix = pendingListMarker ? String(indent.dropLast(2)) + "- " : indent
        pendingListMarker = false
        text += "\(prefix)\(key): \(value)\n"
    }

    mutating func field(_ key: String, quoted value: String) { field(key, Self.quote(value)) }

    mutating func section(_ key: String, _ body: (inout YAMLWriter) -> Void) {
        text += "\(indent)\(key):\n"
        let saved = indent
        indent += "  "
        body(&self)
        indent = saved
    }

    mutating func list<Item>(_ key: String, _ items: [Item], _ body: (inout YAMLWriter, Item) -> Void) {
        guard !items.isEmpty else { return }
        text += "\(indent)\(key):\n"
        let saved = indent
        indent += "    "
        for item in items {
            pendingListMarker = true
            body(&self, item)
        }
        indent = saved
    }
}
