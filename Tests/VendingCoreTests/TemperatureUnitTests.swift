import Testing
import VendingCore

/// `machine.temperature_unit`: the same exact °C shown as people in either unit read it.
@Suite struct TemperatureUnitTests {
    @Test func fiveCelsiusIsFortyOneFahrenheit() {
        #expect(TemperatureUnit.fahrenheit.text(.celsius(5)) == "41.0 °F")
        #expect(TemperatureUnit.celsius.text(.celsius(5)) == "5.0 °C")
        #expect(TemperatureUnit.fahrenheit.number(.celsius(0)) == "32.0")
        #expect(TemperatureUnit.fahrenheit.number(.celsius(-18)) == "-0.4")
        #expect(TemperatureUnit.fahrenheit.number(.celsius(-40)) == "-40.0")
        #expect(TemperatureUnit.fahrenheit.number(.celsius(57)) == "134.6")
        #expect(TemperatureUnit.celsius.number(Temperature(millidegreesCelsius: -1_250)) == "-1.3")
    }

    @Test func reportsDecimalCelsiusIsConvertedAndAnythingElseKept() {
        #expect(TemperatureUnit.fahrenheit.text(decimalCelsius: "3.5") == "38.3 °F")
        #expect(TemperatureUnit.fahrenheit.number(decimalCelsius: "65.0") == "149.0")
        #expect(TemperatureUnit.celsius.text(decimalCelsius: "4.5") == "4.5 °C")
        #expect(TemperatureUnit.fahrenheit.text(decimalCelsius: "warm") == "warm °C", "never made up")
        #expect(TemperatureUnit.fahrenheit.symbol == "°F" && TemperatureUnit(rawValue: "F") == .fahrenheit)
    }
}
