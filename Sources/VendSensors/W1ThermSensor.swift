import VendPOSIX
import VendingCore

#if canImport(Glibc)
    import Glibc
#endif

/// A 1-Wire thermometer (DS18B20 and kin) through the kernel's `w1_therm` driver:
/// `<root>/<id>/w1_slave`, whose first line carries the driver's CRC verdict and whose second
/// the temperature in millidegrees; on kernels that have it and no `w1_slave`, the `temperature`
/// attribute (millidegrees only; the driver fails the read on a bad CRC).
public struct W1ThermSensor: TemperatureSensor {
    public let name: String
    public let directory: String

    /// `root` is `/sys/bus/w1/devices` on a real board, a temporary tree in tests.
    public init(name: String, id: String, root: String = "/sys/bus/w1/devices") {
        self.name = name
        directory = "\(root)/\(id)"
    }

    public func read() -> Result<Temperature, SensorFault> {
        do {
            return Self.parseSlave(try TextFile.read("\(directory)/w1_slave"))
        } catch  where error.errno == ENOENT {
            // No w1_slave: the device is gone, unless the kernel offers only `temperature`.
            do {
                return Self.parseTemperature(try TextFile.read("\(directory)/temperature"))
            } catch  where error.errno == ENOENT {
                return .failure(.missing)
            } catch {
                return .failure(.unreadable(error.reason))
            }
        } catch {
            return .failure(.unreadable(error.reason))
        }
    }

    /// ```
    /// 72 01 4b 46 7f ff 0e 10 57 : crc=57 YES
    /// 72 01 4b 46 7f ff 0e 10 57 t=23125
    /// ```
    public static func parseSlave(_ text: String) -> Result<Temperature, SensorFault> {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.count >= 2, let verdict = lines[0].split(separator: " ").last else {
            return .failure(.unreadable("w1_slave holds \(lines.count) lines, not 2"))
        }
        switch verdict {
        case "YES": break
        case "NO": return .failure(.crcMismatch)
        default: return .failure(.unreadable("no CRC verdict in w1_slave"))
        }
        // A shorted or absent data line reads as zeros, whose CRC is zero too: it passes.
        if lines[0].hasPrefix("00 00 00 00 00 00 00 00 00") { return .failure(.unreadable("all-zero scratchpad")) }
        guard let range = lines[1].firstRange(of: "t=") else { return .failure(.unreadable("no t= in w1_slave")) }
        return parseMillidegrees(lines[1][range.upperBound...])
    }

    /// The `temperature` attribute: millidegrees only.
    public static func parseTemperature(_ text: String) -> Result<Temperature, SensorFault> {
        parseMillidegrees(text[...])
    }

    private static func parseMillidegrees(_ text: Substring) -> Result<Temperature, SensorFault> {
        let trimmed = text.trimmingSpaces
        guard let value = Int(trimmed) else { return .failure(.unreadable("'\(trimmed.prefix(20))' is not a temperature")) }
        // 85 °C is the scratchpad's power-on value: the conversion never ran (power trouble).
        if value == 85_000 { return .failure(.powerOnValue) }
        // The DS18B20's range is −55 … +125 °C; anything else is a bad transfer.
        guard (-55_000...125_000).contains(value) else { return .failure(.unreadable("\(value) m°C is out of the sensor's range")) }
        return .success(Temperature(millidegreesCelsius: value))
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
