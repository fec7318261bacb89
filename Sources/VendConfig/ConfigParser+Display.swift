import Glibc
import VendYAML

extension ConfigParser {
    /// `display:`: language, the kiosk's listener (or `kiosk: off`), an optional LCD.
    func parseDisplay(_ section: MappingReader) -> DisplaySettings? {
        let language = section.choice("language", default: Defaults.display.language)
        let kioskOff = section.value("kiosk")?.scalar?.string == "off"
        // nil: given and wrong (already reported).
        let kiosk = kioskOff ? nil : section.nested("kiosk", required: false).map(parseKiosk) ?? Defaults.kiosk
        let lcdSection = section.nested("lcd", required: false)
        let lcd = lcdSection.flatMap(parseLCD)
        section.finish()
        if kioskOff, lcdSection == nil {
            sink.report(
                "the display has nothing to show on: keep the kiosk or add an lcd", at: section.value("kiosk"),
                path: section.path.key("kiosk"))
            return nil
        }
        guard let language, kioskOff || kiosk != nil, (lcdSection == nil) == (lcd == nil) else { return nil }
        return DisplaySettings(language: language, kiosk: kiosk, lcd: lcd)
    }

    private func parseKiosk(_ section: MappingReader) -> DisplaySettings.Kiosk? {
        let address = section.string("address", required: false) ?? Defaults.kiosk.address
        let port = section.int("port", in: 1...65_535, default: Defaults.kiosk.port)
        section.finish()
        guard Self.isIPAddress(address) else {
            sink.report(
                "'\(address)' is not an IP address (127.0.0.1 for this machine only, 0.0.0.0 for every interface, or ::1)",
                at: section.value("address"), path: section.path.key("address"))
            return nil
        }
        guard let port else { return nil }
        return DisplaySettings.Kiosk(address: address, port: port)
    }

    private func parseLCD(_ section: MappingReader) -> DisplaySettings.LCD? {
        let bus = section.string("bus")
        let addressText = section.string("address", required: false)
        let size = section.choice("size", default: DisplaySettings.LCD.Size.size16x2)
        section.finish()
        if let bus, !(bus.hasPrefix("/dev/i2c-") && bus.dropFirst("/dev/i2c-".count).allSatisfy(\.isNumber) && bus.count > 9) {
            sink.report(
                "'\(bus)' is not an I2C bus device; write /dev/i2c-N (`ls /dev/i2c-*`; 1 on a Raspberry Pi)",
                at: section.value("bus"), path: section.path.key("bus"))
            return nil
        }
        let address: Int?
        if let addressText {
            address = Self.i2cAddress(addressText)
            if address == nil {
                sink.report(
                    "'\(addressText)' is not a 7-bit I2C address; write it in hex, 0x03 to 0x77 (backpacks answer at 0x27, or 0x3F with a PCF8574A)",
                    at: section.value("address"), path: section.path.key("address"))
            }
        } else {
            address = Defaults.lcdAddress
        }
        guard let bus, let address, let size else { return nil }
        return DisplaySettings.LCD(bus: bus, address: address, size: size)
    }

    /// Hex as the backpack's documentation writes it (0x27), or decimal; 0x00–0x02 and 0x78–0x7F
    /// are reserved by the I2C specification.
    static func i2cAddress(_ text: String) -> Int? {
        let value = text.lowercased().hasPrefix("0x") ? Int(text.dropFirst(2), radix: 16) : Int(text, radix: 10)
        guard let value, (0x03...0x77).contains(value) else { return nil }
        return value
    }

    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// A product's `picture`: an image file the kiosk serves, resolved against the file's directory.
    func picturePath(_ text: String, in section: MappingReader) -> String? {
        let allowed = ["svg", "png", "jpg", "jpeg", "webp"]
        let suffix = text.split(separator: ".").last.map { $0.lowercased() } ?? ""
        guard text.contains("."), allowed.contains(suffix) else {
            sink.report(
                "'\(text)' is not a picture the kiosk can show (a .svg, .png, .jpg or .webp file)",
                at: section.value("picture"), path: section.path.key("picture"))
            return nil
        }
        if text.hasPrefix("/") { return text }
        let directory = sink.file.lastIndex(of: "/").map { String(sink.file[..<$0]) } ?? "."
        return directory + "/" + text
    }

    /// A product's `short_name`: printable ASCII (the HD44780's ROM has no Hangul), at most 40.
    func shortName(_ text: String, in section: MappingReader) -> String? {
        guard !text.isEmpty, text.count <= 40, text.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) }) else {
            sink.report(
                "'\(text)' must be 1 to 40 printable ASCII characters (the LCD has no other letters)",
                at: section.value("short_name"), path: section.path.key("short_name"))
            return nil
        }
        return text
    }
}
