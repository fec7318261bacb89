import VendClimate
import VendSettings
import VendYAML
import VendingCore

extension ConfigParser {
    /// `zones:` — temperature zones: their sensors, thermostat, defrost and food-safety rule.
    /// Temperatures are degrees Celsius (`4`, `3.5`); durations are seconds (`_s`).
    func parseZones(_ nodes: [Node]) -> [ZoneConfig] {
        let listPath = ConfigPath.root.key("zones")
        var zones: [ZoneConfig] = []
        var seen: [String: Node] = [:]
        for (index, node) in nodes.enumerated() {
            let label = node.mapping.flatMap { labelValue(in: $0, key: "id") } ?? "#\(index + 1)"
            guard let section = MappingReader(node, path: listPath.element(label), sink: sink) else { continue }
            let id = section.string("id").flatMap { identifier($0, kind: "zone id", key: "id", in: section) }
            let kind: ZoneKind? = section.choice("kind", default: nil)
            let sensors = section.list("sensors").map { parseSensors($0, path: section.path.key("sensors")) }
            let interval = section.int("read_interval_s", in: 1...600, default: 5)
            let thermostat = kind == .ambient ? nil : parseThermostat(section, kind: kind)
            let relaySection = section.nested("relay", required: false)
            let relay = relaySection.flatMap { outputLine($0, purpose: .zoneRelay(ZoneID(label))) }
            let lock = section.choice("lock", default: ZoneLockScope.perishable)
            let defrostParts = section.nested("defrost", required: false).map { parseDefrost($0, zone: ZoneID(label)) }
            let defrost = defrostParts.map(\.settings)
            let healthSection = section.nested("health", required: false)
            let health = kind.flatMap { kind in healthSection.map { parseHealth($0, kind: kind) } ?? HealthRule.defaults(for: kind) }
            section.finish()
            if let id, let first = seen[id] {
                sink.report(
                    "zone '\(id)' is already defined at line \(first.mark.line); zone ids must be unique", at: section.value("id"),
                    path: section.path.key("id"))
                continue
            }
            if let id { seen[id] = node }
            if let defrostNode = section.value("defrost"), kind != .cold {
                sink.report(
                    "only a cold zone defrosts: remove 'defrost' or make the zone 'kind: cold'", at: defrostNode, path: section.path.key("defrost"))
                continue
            }
            if kind == .ambient, let node = relaySection?.node ?? (section.has("lock") ? section.value("lock") : nil) {
                let key = relaySection == nil ? "lock" : "relay"
                sink.report(
                    "an ambient zone is only watched: it drives no relay and locks nothing; remove '\(key)'", at: node, path: section.path.key(key))
                continue
            }
            if let defrostParts, !checkDefrostHeater(defrostParts, zoneHasRelay: relaySection != nil, path: section.path.key("defrost")) { continue }
            if case .some(.some(let list)) = sensors, list.isEmpty {
                sink.report(
                    "a zone needs at least one sensor (w1: 28-… or hwmon: lm75)", at: section.value("sensors"), path: section.path.key("sensors"))
            }
            guard let id, let kind, let sensors = sensors ?? nil, !sensors.isEmpty, let interval, kind == .ambient || thermostat != nil,
                section.value("defrost") == nil || defrost != nil, healthSection == nil || health != nil, let lock,
                relaySection == nil || relay != nil
            else { continue }
            let settings = ZoneSettings(id: ZoneID(id), kind: kind, thermostat: thermostat, defrost: defrost ?? nil, health: health)
            var zone = ZoneConfig(settings: settings, sensors: sensors, readInterval: .seconds(interval))
            zone.relay = relay
            zone.defrostHeater = defrostParts?.heater
            zone.lock = lock
            zones.append(zone)
        }
        return zones
    }

    /// `[{w1: 28-…}, {hwmon: lm75, device: 1-0048, input: temp1_input}]`; nil when one is wrong.
    private func parseSensors(_ nodes: [Node], path: ConfigPath) -> [SensorConfig]? {
        var sensors: [SensorConfig] = []
        for (index, node) in nodes.enumerated() {
            guard let section = MappingReader(node, path: path.element("#\(index + 1)"), sink: sink) else { return nil }
            let w1 = section.string("w1", required: false)
            let chip = section.string("hwmon", required: false)
            let device = chip == nil ? nil : section.string("device", required: false)
            let input = chip == nil ? nil : section.string("input", required: false)
            section.finish()
            switch (w1, chip) {
            case (let id?, nil) where id.hasPrefix("28-") || id.hasPrefix("10-") || id.hasPrefix("22-") || id.hasPrefix("3b-") || id.hasPrefix("42-"):
                sensors.append(.w1(id: id))
            case (let id?, nil):
                sink.report(
                    "'\(id)' is not a 1-Wire thermometer id: it starts with its family (28- for a DS18B20); see ls /sys/bus/w1/devices",
                    at: section.value("w1"), path: section.path.key("w1"))
                return nil
            case (nil, let chip?):
                sensors.append(.hwmon(chip: chip, device: device, input: input ?? "temp1_input"))
            default:
                sink.report(
                    "give one sensor per item: 'w1: 28-…' (a DS18B20) or 'hwmon: lm75' (the chip's name, see cat /sys/class/hwmon/*/name)",
                    at: node, path: section.path)
                return nil
            }
        }
        return sensors
    }

    private func parseThermostat(_ section: MappingReader, kind: ZoneKind?) -> ThermostatSettings? {
        let setPoint = temperature(section, "set_point", in: -40...120)
        let differential = section.has("differential") ? temperature(section, "differential", in: 0.2...20) : Temperature.celsius(2)
        let minimumOn = section.int("min_on_s", in: 0...3_600, default: 150)
        let minimumOff = section.int("min_off_s", in: 0...3_600, default: 150)
        let startDelay = section.int("start_delay_s", in: 0...3_600, default: 150)
        guard let setPoint, let differential, let minimumOn, let minimumOff, let startDelay else { return nil }
        if let kind, let limit = HealthRule.defaults(for: kind)?.limit, !section.has("health"), kind.isPast(limit, setPoint) {
            sink.report(
                "a set point of \(setPoint) is past the \(kind.rawValue) zone's health limit of \(limit): the zone would lock itself",
                at: section.value("set_point"), path: section.path.key("set_point"))
            return nil
        }
        return ThermostatSettings(
            setPoint: setPoint, differential: differential, minimumOn: .seconds(minimumOn), minimumOff: .seconds(minimumOff),
            startDelay: .seconds(startDelay))
    }

    /// A zone's `defrost:` as read: its settings, and its heater's relay (`heater: { line: 16 }`).
    private struct DefrostParts {
        let section: MappingReader
        let settings: DefrostSettings?
        let heater: OutputLineConfig?
    }

    private func parseDefrost(_ section: MappingReader, zone: ZoneID) -> DefrostParts {
        let method = section.choice("method", default: DefrostSettings.Method.offCycle)
        let interval = section.int("interval_s", in: 600...86_400, default: 4 * 3_600)
        let termination = section.has("termination") ? temperature(section, "termination", in: -10...30) : Temperature.celsius(8)
        let maximum = section.int("max_duration_s", in: 60...7_200, default: 30 * 60)
        let drip = section.int("drip_s", in: 0...1_800, default: 4 * 60)
        let heater = section.nested("heater", required: false).flatMap { outputLine($0, purpose: .defrostHeater(zone)) }
        section.finish()
        guard let method, let interval, let termination, let maximum, let drip else {
            return DefrostParts(section: section, settings: nil, heater: heater)
        }
        let settings = DefrostSettings(
            method: method, interval: .seconds(interval), termination: termination, maximumDuration: .seconds(maximum), drip: .seconds(drip))
        return DefrostParts(section: section, settings: settings, heater: heater)
    }

    /// A heater line only with `method: heater`; and a zone whose relay vendd drives needs the
    /// heater's too, or its defrost would only rest the compressor.
    private func checkDefrostHeater(_ parts: DefrostParts, zoneHasRelay: Bool, path: ConfigPath) -> Bool {
        guard let settings = parts.settings else { return true }
        if settings.method != .heater, let node = parts.section.value("heater") {
            sink.report(
                "'heater' is the defrost heater's relay, for 'method: heater'; remove it or set the method", at: node, path: path.key("heater"))
            return false
        }
        if settings.method == .heater, zoneHasRelay, !parts.section.has("heater") {
            sink.report(
                "a heater defrost needs the heater's relay line (heater: { line: … }) when vendd drives the zone's relay",
                at: parts.section.node, path: path)
            return false
        }
        return true
    }

    private func parseHealth(_ section: MappingReader, kind: ZoneKind) -> HealthRule? {
        guard let defaults = HealthRule.defaults(for: kind) else {
            sink.report("an ambient zone has no health rule: remove 'health'", at: section.node, path: section.path)
            return nil
        }
        func seconds(_ key: String, _ fallback: Duration) -> Duration? {
            section.int(key, in: 0...86_400, default: Int(fallback.components.seconds)).map { .seconds($0) }
        }
        let limit = section.has("limit") ? temperature(section, "limit", in: -40...120) : defaults.limit
        let trip = seconds("trip_s", defaults.tripTime)
        let door = seconds("recovery_after_door_s", defaults.recoveryAfterDoor)
        let defrost = seconds("recovery_after_defrost_s", defaults.recoveryAfterDefrost)
        let powerOn = seconds("recovery_after_power_on_s", defaults.recoveryAfterPowerOn)
        let grace = seconds("sensor_grace_s", defaults.sensorGrace)
        section.finish()
        guard let limit, let trip, let door, let defrost, let powerOn, let grace else { return nil }
        return HealthRule(
            limit: limit, tripTime: trip, recoveryAfterDoor: door, recoveryAfterDefrost: defrost, recoveryAfterPowerOn: powerOn, sensorGrace: grace)
    }

    /// Degrees Celsius with at most three decimals: `4`, `-18`, `3.5`.
    private func temperature(_ section: MappingReader, _ key: String, in range: ClosedRange<Double>) -> Temperature? {
        guard let node = section.required(key), let text = ScalarRules.text(node, path: section.path.key(key), sink: sink) else { return nil }
        guard let value = Temperature(decimalCelsius: text)?.millidegreesCelsius,
            (range.lowerBound * 1_000...range.upperBound * 1_000).contains(Double(value))
        else {
            sink.report(
                "'\(text)' is not a temperature from \(Self.degrees(range.lowerBound)) to \(Self.degrees(range.upperBound)): give degrees Celsius, e.g. 4 or 3.5",
                at: node, path: section.path.key(key))
            return nil
        }
        return Temperature(millidegreesCelsius: value)
    }

    private static func degrees(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) °C" : "\(value) °C"
    }
}
