import VendClimate

/// One zone of the file: what its controller decides by, and the sensors that feed it.
public struct ZoneConfig: Sendable {
    public let settings: ZoneSettings
    public let sensors: [SensorConfig]
    /// How often the sensors are read.
    public let readInterval: Duration
}

/// Where a sensor is read: a 1-Wire thermometer by its id, or an hwmon input by its chip's name.
public enum SensorConfig: Sendable, Equatable {
    /// `w1: 28-000005e2fdc3`, under /sys/bus/w1/devices.
    case w1(id: String)
    /// `hwmon: lm75` (and `device: 1-0048` to tell two chips of one name apart), under /sys/class/hwmon.
    case hwmon(chip: String, device: String?, input: String)

    public var name: String {
        switch self {
        case .w1(let id): "w1:\(id)"
        case .hwmon(let chip, let device, let input): "hwmon:\(chip)\(device.map { "@\($0)" } ?? "")/\(input)"
        }
    }
}
