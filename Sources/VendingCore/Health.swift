/// A temperature in thousandths of a degree Celsius, the unit Linux reports (w1_therm, hwmon):
/// whole numbers keep every control and health decision exact and replayable.
public struct Temperature: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let millidegreesCelsius: Int

    public init(millidegreesCelsius: Int) { self.millidegreesCelsius = millidegreesCelsius }

    /// "3.5" → 3.500 °C, exactly (no floating point on the way); at most three decimals and
    /// ±1000 degrees. Nil for anything else.
    public init?(decimalCelsius text: String) {
        let negative = text.hasPrefix("-")
        let parts = text.dropFirst(negative ? 1 : 0).split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && $0.isNumber }),
            let whole = Int(parts[0]), whole <= 1_000
        else { return nil }
        var fraction = 0
        if parts.count == 2 {
            let digits = parts[1]
            guard (1...3).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else { return nil }
            fraction = value * [100, 10, 1][digits.count - 1]
        }
        millidegreesCelsius = (negative ? -1 : 1) * (whole * 1_000 + fraction)
    }

    public static func celsius(_ degrees: Int) -> Temperature { Temperature(millidegreesCelsius: degrees * 1_000) }

    public static func < (lhs: Temperature, rhs: Temperature) -> Bool { lhs.millidegreesCelsius < rhs.millidegreesCelsius }
    public static func + (lhs: Temperature, rhs: Temperature) -> Temperature {
        Temperature(millidegreesCelsius: lhs.millidegreesCelsius + rhs.millidegreesCelsius)
    }
    public static func - (lhs: Temperature, rhs: Temperature) -> Temperature {
        Temperature(millidegreesCelsius: lhs.millidegreesCelsius - rhs.millidegreesCelsius)
    }

    /// In tenths of a degree Fahrenheit, rounded to the nearest.
    public var decidegreesFahrenheit: Int {
        let scaled = millidegreesCelsius * 9 / 5 + 32_000
        return (scaled + (scaled >= 0 ? 50 : -50)) / 100
    }

    /// In tenths of a degree Celsius, rounded to the nearest.
    public var decidegreesCelsius: Int { (millidegreesCelsius + (millidegreesCelsius >= 0 ? 50 : -50)) / 100 }

    /// "4.5": degrees Celsius with one decimal, for fields and JSON.
    public var decimalCelsius: String { Self.tenths(decidegreesCelsius) }

    /// "4.125", "-18", "3.5": exact degrees Celsius, as the configuration file writes them.
    public var decimalCelsiusExact: String {
        let magnitude = abs(millidegreesCelsius)
        var fraction = magnitude % 1_000 == 0 ? "" : String(String(magnitude % 1_000 + 1_000).dropFirst())
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return (millidegreesCelsius < 0 ? "-" : "") + "\(magnitude / 1_000)" + (fraction.isEmpty ? "" : "." + fraction)
    }

    /// "4.5 °C": one decimal, as thermometers on cabinets show it.
    public var description: String { Self.tenths(decidegreesCelsius) + " °C" }

    /// "40.1 °F".
    public var fahrenheitDescription: String { Self.tenths(decidegreesFahrenheit) + " °F" }

    private static func tenths(_ value: Int) -> String {
        (value < 0 ? "-" : "") + "\(abs(value) / 10).\(abs(value) % 10)"
    }

    public init(from decoder: any Decoder) throws {
        millidegreesCelsius = try decoder.singleValueContainer().decode(Int.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(millidegreesCelsius)
    }
}

public enum ZoneTag {}
/// A temperature zone of the cabinet as named in the configuration, e.g. "chilled".
public typealias ZoneID = Identifier<ZoneTag>

/// Why a sensor gave no temperature. Each counts as no reading at all: the zone's health control
/// locks after its grace time, since food it cannot see may be warming.
public enum SensorFault: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The device is gone from the bus (its sysfs directory or file is missing).
    case missing
    /// The 1-Wire transfer failed its CRC (`crc=.. NO`).
    case crcMismatch
    /// 85.000 °C, the DS18B20's power-on register: the conversion never ran.
    case powerOnValue
    /// The file could not be read, or did not hold a temperature.
    case unreadable(String)

    public var description: String {
        switch self {
        case .missing: "sensor missing"
        case .crcMismatch: "CRC check failed"
        case .powerOnValue: "85 °C power-on value (no conversion)"
        case .unreadable(let detail): "unreadable: \(detail)"
        }
    }
}

/// What made a zone unfit to hold its perishable food.
public enum HealthTripCause: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Past its limit (above it for a cold zone, below it for a hot one) longer than allowed.
    case temperature(limit: Temperature)
    /// No good reading for longer than the sensor grace time.
    case sensorFault(SensorFault)

    public var description: String {
        switch self {
        case .temperature(let limit): "temperature past the limit of \(limit)"
        case .sensorFault(let fault): "sensor fault (\(fault))"
        }
    }
}

/// The zone controller's verdict that a zone failed its health rule: `since` is when the
/// excursion (or the sensor's silence) began, `worst` the temperature furthest past the limit.
public struct HealthTrip: Hashable, Sendable, Codable {
    public let zone: ZoneID
    public let cause: HealthTripCause
    public let since: Instant
    public let worst: Temperature?

    public init(zone: ZoneID, cause: HealthTripCause, since: Instant, worst: Temperature?) {
        self.zone = zone
        self.cause = cause
        self.since = since
        self.worst = worst
    }
}

/// A zone's latched food-safety lockout: its perishable slots sell nothing until a technician
/// services the zone (FDA Food Code 4-204.111: cooling down again is not enough).
public struct HealthLock: Hashable, Sendable, Codable {
    public let trip: HealthTrip
    public let lockedAt: Instant

    public init(trip: HealthTrip, lockedAt: Instant) {
        self.trip = trip
        self.lockedAt = lockedAt
    }
}
