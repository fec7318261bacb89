import VendingCore

/// A temperature sensor read on demand. A read may block (a DS18B20 conversion takes ~750 ms),
/// so it is only ever called from the sensors' own lane, never on the vend path.
public protocol TemperatureSensor: Sendable {
    /// The configured name, for logs and `vendctl status`.
    var name: String { get }
    func read() -> Result<Temperature, SensorFault>
}
