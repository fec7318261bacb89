import Foundation
import Testing
import VendClimate
import VendConfig
import VenddTestSupport
import VendingCore

/// `zones:` and the slots' `zone` / `perishable`: what the example file gives, and the exact
/// message each mistake gets.
@Suite struct ZoneConfigTests {
    static let base = """
        machine:
          currency: { code: USD, minor_digits: 2, format: "${amount}" }
          maximum_credit: "10.00"
        gpio:
          chip: gpiochip0
        products:
          - { id: milk, name: Milk, category: [milk] }
        zones:
          - id: chilled
            kind: cold
            sensors: [{ w1: 28-000005e2fdc3 }]
            set_point: 3.5
        slots:
          - id: A1
            product: milk
            price: "1.75"
            capacity: 10
            zone: chilled
            perishable: true
            button: { line: 5 }
            relay: { line: 6 }
        """ + "\n"

    static func errors(_ edits: [(String, String)]) throws -> [String] {
        try EditedConfig.errors(base, edits)
    }

    @Test func theBaseGivesAColdZoneWithTheFoodCodeDefaults() throws {
        let config = try ConfigLoader.parse(Self.base, file: "test.yaml")
        let zone = try #require(config.zones.first)
        #expect(zone.sensors == [.w1(id: "28-000005e2fdc3")])
        #expect(zone.settings.thermostat?.setPoint == Temperature(millidegreesCelsius: 3_500))
        #expect(zone.settings.thermostat?.minimumOff == .seconds(150))
        #expect(zone.settings.health == HealthRule(limit: .celsius(5)))
        #expect(config.machineSetup.slots[0].healthZone == "chilled")
    }

    @Test func theExampleFileHasTwoZonesAndFourSensors() throws {
        let config = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent("config/examples/chilled-food.yaml").path)
        #expect(config.zones.map(\.settings.kind) == [.cold, .hot])
        #expect(config.zones.flatMap(\.sensors).count == 4)
        #expect(config.zones[0].settings.defrost?.interval == .seconds(14_400))
        #expect(config.zones[1].settings.health?.limit == .celsius(57))
        #expect(config.machineSetup.slots.map(\.healthZone) == ["chilled", "chilled", nil, "soup"])
        #expect(config.zones.map(\.relay?.line) == [.offset(12), .offset(16)])
        #expect(config.machineSetup.machineLockZones.isEmpty)
    }

    /// `machine.temperature_unit` changes what people read, never the file's own degrees.
    @Test func theDisplayUnitIsCelsiusUnlessTheFileSaysFahrenheit() throws {
        #expect(try ConfigLoader.parse(Self.base, file: "test.yaml").machine.temperatureUnit == .celsius)
        let unitLine = "  maximum_credit: \"10.00\"\n  temperature_unit: F\n"
        let fahrenheit = try ConfigLoader.parse(
            Self.base.replacingOccurrences(of: "  maximum_credit: \"10.00\"\n", with: unitLine), file: "test.yaml")
        #expect(fahrenheit.machine.temperatureUnit == .fahrenheit)
        #expect(fahrenheit.zones.first?.settings.thermostat?.setPoint == Temperature(millidegreesCelsius: 3_500), "still 3.5 °C")
        #expect(
            try Self.errors([("  maximum_credit: \"10.00\"\n", "  maximum_credit: \"10.00\"\n  temperature_unit: f\n")]) == [
                "test.yaml:4:21: machine.temperature_unit: 'f' is not one of 'C' or 'F'; did you mean 'F'?"
            ])
    }

    @Test func aSlotInAnUnknownZoneGetsASuggestion() throws {
        #expect(
            try Self.errors([("    zone: chilled\n", "    zone: chiled\n")]) == [
                "test.yaml:18:11: slots[A1].zone: unknown zone 'chiled'; did you mean 'chilled'? (zones: chilled)"
            ])
    }

    @Test func aPerishableSlotNeedsAZone() throws {
        #expect(
            try Self.errors([("    zone: chilled\n", "")]) == [
                "test.yaml:18:17: slots[A1].perishable: a perishable slot needs the zone that keeps it (zone: …): without one nothing stops its sales when it warms"
            ])
    }

    @Test func aTemperatureIsDegreesCelsius() throws {
        #expect(
            try Self.errors([("set_point: 3.5", "set_point: 38F")]) == [
                "test.yaml:12:16: zones[chilled].set_point: '38F' is not a temperature from -40 °C to 120 °C: give degrees Celsius, e.g. 4 or 3.5"
            ])
    }

    @Test func aSetPointPastTheLimitWouldLockTheZone() throws {
        #expect(
            try Self.errors([("set_point: 3.5", "set_point: 8")]) == [
                "test.yaml:12:16: zones[chilled].set_point: a set point of 8.0 °C is past the cold zone's health limit of 5.0 °C: the zone would lock itself"
            ])
    }

    @Test func aW1IdStartsWithItsFamily() throws {
        #expect(
            try Self.errors([("w1: 28-000005e2fdc3", "w1: 000005e2fdc3")]) == [
                "test.yaml:11:21: zones[chilled].sensors[#1].w1: '000005e2fdc3' is not a 1-Wire thermometer id: it starts with its family (28- for a DS18B20); see ls /sys/bus/w1/devices"
            ])
    }

    @Test func onlyAColdZoneDefrosts() throws {
        #expect(
            try Self.errors([("kind: cold", "kind: hot"), ("set_point: 3.5", "set_point: 65\n    defrost: { method: heater }")]) == [
                "test.yaml:13:14: zones[chilled].defrost: only a cold zone defrosts: remove 'defrost' or make the zone 'kind: cold'"
            ])
    }

    @Test func aZoneDrivesItsRelayAndDefrostHeaterLinesAndMayLockTheMachine() throws {
        let text = Self.base.replacingOccurrences(
            of: "set_point: 3.5\n",
            with: """
                set_point: 3.5
                    relay: { line: 17, chip: mcp23017, active_low: true }
                    lock: machine
                    defrost: { method: heater, heater: { line: 16 } }

                """)
        let config = try ConfigLoader.parse(text, file: "test.yaml")
        let zone = try #require(config.zones.first)
        #expect(zone.relay?.line == .offset(17) && zone.relay?.chip == "mcp23017" && zone.relay?.activeLow == true)
        #expect(zone.defrostHeater?.line == .offset(16) && zone.defrostHeater?.chip == nil)
        #expect(zone.lock == .machine)
        #expect(config.machineSetup.machineLockZones == ["chilled"])
        #expect(config.lines.map(\.purpose.description).suffix(2) == ["relay of zone chilled", "defrost heater of zone chilled"])
        // The resolved file reads back to the same lines.
        let again = try ConfigLoader.parse(config.resolvedYAML, file: "resolved.yaml")
        #expect(again.zones.first?.relay?.chip == "mcp23017" && again.zones.first?.defrostHeater?.line == .offset(16))
        #expect(again.machineSetup.machineLockZones == ["chilled"])
    }

    @Test func aZoneRelayLineServesOnePurpose() throws {
        #expect(
            try Self.errors([("set_point: 3.5", "set_point: 3.5\n    relay: { line: 6 }")]) == [
                "test.yaml:22:20: slots[A1].relay.line: line 6 is already the relay of zone chilled (zones[chilled].relay.line at line 13); each GPIO line can serve one purpose"
            ])
    }

    @Test func relayAndHeaterMistakesAreNamed() throws {
        #expect(
            try Self.errors([("kind: cold", "kind: ambient"), ("set_point: 3.5", "relay: { line: 7 }")]) == [
                "test.yaml:12:12: zones[chilled].relay: an ambient zone is only watched: it drives no relay and locks nothing; remove 'relay'"
            ])
        #expect(
            try Self.errors([("set_point: 3.5", "set_point: 3.5\n    lock: everything")]) == [
                "test.yaml:13:11: zones[chilled].lock: 'everything' is not one of 'perishable' or 'machine'"
            ])
        #expect(
            try Self.errors([("set_point: 3.5", "set_point: 3.5\n    relay: { line: 7 }\n    defrost: { method: heater }")]) == [
                "test.yaml:14:14: zones[chilled].defrost: a heater defrost needs the heater's relay line (heater: { line: … }) when vendd drives the zone's relay"
            ])
        #expect(
            try Self.errors([("set_point: 3.5", "set_point: 3.5\n    defrost: { heater: { line: 7 } }")]) == [
                "test.yaml:13:24: zones[chilled].defrost.heater: 'heater' is the defrost heater's relay, for 'method: heater'; remove it or set the method"
            ])
    }
}
