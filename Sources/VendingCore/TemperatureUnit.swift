/// How temperatures are shown to people (`machine.temperature_unit`). Decisions, the file's
/// limits and set points, logs and JSON stay in degrees Celsius: only the text people read
/// changes, as `machine.currency.format` changes only how amounts read.
public enum TemperatureUnit: String, Hashable, Sendable, Codable, CaseIterable {
    case celsius = "C"
    case fahrenheit = "F"

    /// "°C" or "°F".
    public var symbol: String { self == .celsius ? "°C" : "°F" }

    /// "4.5 °C" or "40.1 °F": one decimal, as cabinet thermometers show it.
    public func text(_ temperature: Temperature) -> String {
        self == .celsius ? temperature.description : temperature.fahrenheitDescription
    }

    /// "40.1": the number alone, for tables whose heading names the unit.
    public func number(_ temperature: Temperature) -> String {
        let tenths = self == .celsius ? temperature.decidegreesCelsius : temperature.decidegreesFahrenheit
        return (tenths < 0 ? "-" : "") + "\(abs(tenths) / 10).\(abs(tenths) % 10)"
    }

    /// Exact decimal Celsius as reports carry it ("4.5"), shown in this unit; text that is no
    /// temperature is shown as it came.
    public func text(decimalCelsius: String) -> String {
        Temperature(decimalCelsius: decimalCelsius).map(text) ?? "\(decimalCelsius) °C"
    }

    public func number(decimalCelsius: String) -> String {
        Temperature(decimalCelsius: decimalCelsius).map(number) ?? decimalCelsius
    }
}
