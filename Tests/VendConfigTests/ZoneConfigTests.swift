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
        var text = base
        for (old, new) in edits {
            #expect(text.contains(old), "the base has no '\(old)'")
            text = text.replacingOccurrences(of: old, with: new)
        }
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(text, file: "test.yaml") }
        return error.diagnostics.map(\.description)
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
}
