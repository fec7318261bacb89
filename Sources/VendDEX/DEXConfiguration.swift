/// A configuration a handheld sent (DEX operation S): EVA-DTS segments, of which vendd takes
/// the prices. `PA1*<selection>*<price>` (the product record vendd's audit writes) and
/// `PC1*<selection>*<price>` (the price record telemeters send for a remote price change) each
/// set a selection's price, in minor units with the decimals of ID4 implied.
public struct DEXConfiguration: Sendable, Equatable {
    public struct Price: Sendable, Equatable {
        public let selection: String
        public let minorUnits: Int64
        /// The segment, for the log and the refusal.
        public let segment: String
    }

    public private(set) var prices: [Price] = []
    /// SD1 (EVA-DTS 6.1.1 p.40, p.258): SD101 the current password, SD102 the new one, SD105
    /// the interval data's reset control, SD106 the events'. Nil where the file has none.
    public private(set) var currentPassword: [UInt8]?
    public private(set) var newPassword: [UInt8]?
    public private(set) var intervalReset: ResetControl?
    public private(set) var eventReset: ResetControl?
    /// SD103/SD104 (selective reporting and resets, optional functions) were sent: vendd
    /// reports and resets everything.
    public private(set) var selectiveIgnored = false

    /// SD105/SD106: "AUTO, SAVE, and RESET are the allowable commands" (p.258).
    public enum ResetControl: String, Sendable, Equatable {
        case auto = "AUTO"
        case save = "SAVE"
        case reset = "RESET"
    }

    /// A 4-byte code in the form §6.1.6 defines (p.178–179): "X" and 8 hex digits, most
    /// significant byte first ("X01020304"). Nil for any other form.
    public static func passCode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 9, digits[0] == UInt8(ascii: "X") else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 1, to: 9, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
    /// ID401, the decimal places the prices are written with, when the file says.
    public private(set) var decimalPlaces: Int?
    /// Segments that could not be read as what their name says ("PA1*A1*1.50": no price).
    public private(set) var refused: [(segment: String, reason: String)] = []
    /// Segments vendd does not act on (DXS, ST, ID1 …), by name, in order of first appearance.
    public private(set) var ignored: [String] = []

    public static func == (left: Self, right: Self) -> Bool {
        left.prices == right.prices && left.decimalPlaces == right.decimalPlaces && left.ignored == right.ignored
            && left.currentPassword == right.currentPassword && left.newPassword == right.newPassword
            && left.intervalReset == right.intervalReset && left.eventReset == right.eventReset
            && left.refused.map(\.segment) == right.refused.map(\.segment) && left.refused.map(\.reason) == right.refused.map(\.reason)
    }

    public init(text: [UInt8]) {
        let lines = text.split(whereSeparator: { $0 == 0x0D || $0 == 0x0A }).map { String(decoding: $0, as: UTF8.self) }
        for line in lines {
            let elements = line.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
            let name = elements[0]
            if name == "ID4", elements.count > 1, let decimals = Int(elements[1]), (0...4).contains(decimals) {
                decimalPlaces = decimals
                continue
            }
            if name == "SD1" {
                readSD1(elements, line: line)
                continue
            }
            guard name == "PA1" || name == "PC1" else {
                if !name.isEmpty, !ignored.contains(name) { ignored.append(name) }
                continue
            }
            guard elements.count >= 3, !elements[1].isEmpty else {
                refused.append((line, "a price record needs a selection and a price"))
                continue
            }
            guard !elements[2].isEmpty, elements[2].utf8.allSatisfy({ (0x30...0x39).contains($0) }), elements[2].utf8.count <= 12,
                let price = Int64(elements[2])
            else {
                refused.append((line, "the price '\(elements[2])' is not a whole number of minor units"))
                continue
            }
            prices.append(Price(selection: elements[1], minorUnits: price, segment: line))
        }
    }

    private mutating func readSD1(_ elements: [String], line: String) {
        func element(_ number: Int) -> String? {
            guard elements.count > number else { return nil }
            let value = elements[number].trimmingSpaces
            return value.isEmpty ? nil : value
        }
        for (number, field) in [(1, "SD101"), (2, "SD102")] {
            guard let text = element(number) else { continue }
            guard let code = Self.passCode(text) else {
                refused.append((line, "\(field) '\(text)' is not a pass code in the form X and 8 hex digits (EVA-DTS 6.1.1 §6.1.6)"))
                continue
            }
            if number == 1 { currentPassword = code } else { newPassword = code }
        }
        if element(3) != nil || element(4) != nil { selectiveIgnored = true }
        for (number, field) in [(5, "SD105"), (6, "SD106")] {
            guard let text = element(number) else { continue }
            guard let control = ResetControl(rawValue: text.uppercased()) else {
                refused.append((line, "\(field) '\(text)' is none of AUTO, SAVE, RESET"))
                continue
            }
            if number == 5 { intervalReset = control } else { eventReset = control }
        }
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(String.UnicodeScalarView(unicodeScalars.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()))
    }
}
