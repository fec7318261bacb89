import VendClimate
import VendSettings

/// One zone of the file: what its controller decides by, and the sensors that feed it.
public struct ZoneConfig: Sendable {
    public let settings: ZoneSettings
    public let sensors: [SensorConfig]
    /// How often the sensors are read.
    public let readInterval: Duration
    /// The compressor (cold) or heater (hot) relay; nil: the decision is logged and shown only
    /// (a cabinet whose own thermostat runs the compressor).
    public var relay: OutputLineConfig? = nil
    /// The defrost heater's relay (defrost method `heater`); nil: none is driven.
    public var defrostHeater: OutputLineConfig? = nil
    /// What a health lock of this zone stops: its perishable slots, or the whole machine.
    public var lock: ZoneLockScope = .perishable

    /// The zone's output lines, relay first.
    public var outputLines: [OutputLineConfig] { [relay, defrostHeater].compactMap(\.self) }
}

/// `lock:` — what a zone's health lock stops.
public enum ZoneLockScope: String, Sendable, CaseIterable {
    /// The slots marked `perishable` in the zone; everything else keeps selling.
    case perishable
    /// Every slot of the machine (a machine that sells only from one cabinet, or whose operator
    /// wants no sale at all from a machine that failed its temperature).
    case machine
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
