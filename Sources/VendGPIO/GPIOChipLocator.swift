import CGPIOShim
import FoundationEssentials
import Glibc
import VendHardware
import VendPOSIX

/// Finds the chip the config names, by device name (`gpiochip0`), path (`/dev/gpiochip0`) or
/// label (`pinctrl-bcm2711`, or a gpio-sim bank's label), and says which chips exist when none
/// matches.
enum GPIOChipLocator {
    struct Found {
        let path: String
        let name: String
        let label: String
        let lineCount: Int
    }

    static func locate(_ wanted: String, devices: String = "/dev") throws(GPIOError) -> Found {
        let paths = chipPaths(in: devices)
        if wanted.hasPrefix("/") || paths.contains("\(devices)/\(wanted)") {
            let path = wanted.hasPrefix("/") ? wanted : "\(devices)/\(wanted)"
            guard FileManager.default.fileExists(atPath: path) else {
                throw .chipNotFound(wanted, available: describe(paths))
            }
            return try inspect(path)
        }
        for path in paths {
            if let found = try? inspect(path), found.label == wanted { return found }
        }
        throw .chipNotFound(wanted, available: describe(paths))
    }

    /// Opens the chip briefly to read its name, label and size.
    static func inspect(_ path: String) throws(GPIOError) -> Found {
        let chip = try open(path)
        defer { vgpio_chip_close(chip) }
        return Found(
            path: path, name: text(of: chip, vgpio_chip_name), label: text(of: chip, vgpio_chip_label),
            lineCount: Int(vgpio_chip_line_count(chip)))
    }

    static func open(_ path: String) throws(GPIOError) -> OpaquePointer {
        guard let chip = vgpio_chip_open(path) else {
            let code = errno
            if code == EACCES || code == EPERM { throw .permissionDenied(device: path) }
            throw .ioFailure("cannot open GPIO chip \(path): \(SystemError.text(code))", origin: nil)
        }
        return chip
    }

    private static func chipPaths(in devices: String) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: devices)) ?? []
        return entries.filter { $0.hasPrefix("gpiochip") }
            .sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }
            .map { "\(devices)/\($0)" }
    }

    /// "gpiochip0 [pinctrl-bcm2711], gpiochip1 [raspberrypi-exp-gpio]": what a technician can
    /// copy into `gpio.chip`.
    private static func describe(_ paths: [String]) -> [String] {
        paths.map { path in
            let name = String(path.split(separator: "/").last ?? "")
            guard let found = try? inspect(path) else { return name }
            return "\(name) [\(found.label)]"
        }
    }

    private static func text(of chip: OpaquePointer, _ read: (OpaquePointer, UnsafeMutablePointer<CChar>, Int) -> Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        guard read(chip, &buffer, buffer.count) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
