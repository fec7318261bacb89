import VendConfig

/// Text for the HD44780's character ROM (A00, the common one): printable ASCII, except that its
/// 0x5C is ¥ and 0x7E is →.
public enum LCDText {
    /// What the LCD calls a product: its short name, its name if that is printable ASCII, or its id.
    public static func shortName(_ name: String, face: ProductFace?, id: String) -> String {
        face?.shortName ?? (isPrintableASCII(name) ? name : id)
    }

    static func isPrintableASCII(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { (0x20...0x7D).contains($0.value) && $0 != "\\" }
    }

    /// Character codes for `text`: what the ROM cannot draw becomes its nearest ASCII, or '?'.
    static func asciiCodes(_ text: String) -> [UInt8] {
        var codes: [UInt8] = []
        for scalar in text.unicodeScalars {
            switch scalar {
            case "…": codes += Array("...".utf8)
            case "—", "–", "→": codes.append(UInt8(ascii: "-"))
            case "’", "‘": codes.append(UInt8(ascii: "'"))
            case "\\": codes.append(UInt8(ascii: "/"))
            default: codes.append((0x20...0x7D).contains(scalar.value) ? UInt8(scalar.value) : UInt8(ascii: "?"))
            }
        }
        return codes
    }

    /// Exactly `width` character codes: `text` cut, or padded with spaces.
    static func characterCodes(_ text: String, width: Int) -> [UInt8] {
        let cut = Array(asciiCodes(text).prefix(width))
        return cut + Array(repeating: UInt8(ascii: " "), count: width - cut.count)
    }

    /// One frame of a line that may be too long: it scrolls left a character per step, with a gap
    /// before it comes round again; a line that fits stands still.
    public static func scrolled(_ text: String, width: Int, step: Int) -> String {
        let line = String(decoding: asciiCodes(text), as: UTF8.self)
        guard line.count > width else { return line }
        let loop = Array(line + "    ")
        let start = step % loop.count
        return String((0..<width).map { loop[(start + $0) % loop.count] })
    }
}
