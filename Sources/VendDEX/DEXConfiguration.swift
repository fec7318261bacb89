/// A configuration a handheld sent (DEX operation S): EVA-DTS segments, of which vendd takes
/// the prices, in minor units with the decimals of ID4 implied:
/// - `PA1*<selection>*<price>` (the product record vendd's audit writes) and
///   `PC1*<selection>*<price>` (the price record telemeters send for a remote price change): the
///   selection's price, list 1 for every payment.
/// - `LA1*<list>*<selection>*<price>*…` (price list, product, price, then two sales counts
///   that a configuration does not set): the selection's price on that list, every payment.
/// - `PA7*<selection>*<CA|DA|DB>*<list>*<price>*…` (the record vendd's audit writes per
///   payment device and list, EVA-DTS 6.1.1 p.141): the price on that list for that payment.
/// vendd numbers its lists from 1 (list 1 is the normal prices); EVA-DTS gives a list number
/// up to 3 digits (PA703).
public struct DEXConfiguration: Sendable, Equatable {
    public struct Price: Sendable, Equatable {
        public let selection: String
        public let minorUnits: Int64
        /// The price list, 1 for PA1 and PC1.
        public let list: Int
        /// The payment as vendd names it (`cash`, `cashless1`, `cashless2`), nil for every one.
        public let payment: String?
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
            guard let layout = PriceLayout(segment: name) else {
                if !name.isEmpty, !ignored.contains(name) { ignored.append(name) }
                continue
            }
            switch layout.read(elements) {
            case .success(let price):
                prices.append(
                    Price(selection: price.selection, minorUnits: price.minorUnits, list: price.list, payment: price.payment, segment: line))
            case .failure(let refusal): refused.append((line, refusal.reason))
            }
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

/// Where a price record keeps its fields: the element numbers of the selection, the price, the
/// list and the payment device, for the records that set a price.
private enum PriceLayout {
    case product  // PA1, PC1
    case priceList  // LA1
    case paymentDevice  // PA7

    init?(segment: String) {
        switch segment {
        case "PA1", "PC1": self = .product
        case "LA1": self = .priceList
        case "PA7": self = .paymentDevice
        default: return nil
        }
    }

    struct Refusal: Error { let reason: String }
    typealias Read = (selection: String, minorUnits: Int64, list: Int, payment: String?)

    func read(_ elements: [String]) -> Result<Read, Refusal> {
        let (selectionAt, priceAt, listAt, deviceAt): (Int, Int, Int?, Int?) =
            switch self {
            case .product: (1, 2, nil, nil)
            case .priceList: (2, 3, 1, nil)
            case .paymentDevice: (1, 4, 3, 2)
            }
        func element(_ number: Int) -> String { elements.count > number ? elements[number] : "" }
        guard !element(selectionAt).isEmpty, elements.count > priceAt else {
            return .failure(Refusal(reason: "a price record needs a selection and a price"))
        }
        var list = 1
        if let listAt {
            let text = element(listAt)
            guard let number = Self.wholeNumber(text, digits: 3) else {
                return .failure(Refusal(reason: "the price list '\(text)' is not a number of up to 3 digits"))
            }
            guard number > 0 else {
                return .failure(
                    Refusal(reason: "price list 0: this machine numbers its lists from 1 (list 1 is the normal prices, as its audit's PA7 says)"))
            }
            list = Int(number)
        }
        var payment: String?
        if let deviceAt {
            let code = element(deviceAt)
            guard let name = DEXAudit.ListSales.payment(ofDevice: code) else {
                return .failure(Refusal(reason: "the payment device '\(code)' is none of CA (cash), DA (cashless 1), DB (cashless 2)"))
            }
            payment = name
        }
        let priceText = element(priceAt)
        guard let price = Self.wholeNumber(priceText, digits: 12) else {
            return .failure(Refusal(reason: priceText.isEmpty ? "no price" : "the price '\(priceText)' is not a whole number of minor units"))
        }
        return .success((element(selectionAt), price, list, payment))
    }

    private static func wholeNumber(_ text: String, digits: Int) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= digits, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text)
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(String.UnicodeScalarView(unicodeScalars.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()))
    }
}
