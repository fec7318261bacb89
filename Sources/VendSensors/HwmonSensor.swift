import FoundationEssentials
import VendPOSIX
import VendingCore

#if canImport(Glibc)
    import Glibc
#endif

/// A temperature input of any hwmon device (LM75, TMP102, SHT3x on I²C; w1_therm registers one
/// too): `<root>/hwmonN/temp1_input` in millidegrees Celsius. The device is found by its `name`
/// attribute on every read, since hwmonN numbers follow probe order and change between boots;
/// `device` (the basename of the `device` link, e.g. `1-0048`) tells two chips of one name apart.
public struct HwmonSensor: TemperatureSensor {
    public let name: String
    public let chip: String
    public let device: String?
    public let input: String
    public let root: String

    public init(name: String, chip: String, device: String? = nil, input: String = "temp1_input", root: String = "/sys/class/hwmon") {
        self.name = name
        self.chip = chip
        self.device = device
        self.input = input
        self.root = root
    }

    public func read() -> Result<Temperature, SensorFault> {
        guard let directory = locate() else { return .failure(.missing) }
        let text: String
        do {
            text = try TextFile.read("\(directory)/\(input)")
        } catch  where error.errno == ENOENT || error.errno == ENODEV {
            return .failure(.missing)
        } catch {
            // A driver that could not talk to its chip fails the read (EIO, ENXIO).
            return .failure(.unreadable(error.reason))
        }
        let trimmed = text[...].trimmingSpaces
        guard let value = Int(trimmed) else { return .failure(.unreadable("'\(trimmed.prefix(20))' is not a temperature")) }
        return .success(Temperature(millidegreesCelsius: value))
    }

    /// The hwmonN directory whose `name` (and `device`, if given) match; nil when none does.
    func locate() -> String? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for entry in entries.sorted() {
            let directory = "\(root)/\(entry)"
            guard let found = try? TextFile.read("\(directory)/name", limit: 256), found[...].trimmingSpaces == chip else { continue }
            if let device {
                guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/device"),
                    link.split(separator: "/").last.map(String.init) == device
                else { continue }
            }
            return directory
        }
        return nil
    }
}
