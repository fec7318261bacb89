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
    /// ID401, the decimal places the prices are written with, when the file says.
    public private(set) var decimalPlaces: Int?
    /// Segments that could not be read as what their name says ("PA1*A1*1.50": no price).
    public private(set) var refused: [(segment: String, reason: String)] = []
    /// Segments vendd does not act on (DXS, ST, ID1 …), by name, in order of first appearance.
    public private(set) var ignored: [String] = []

    public static func == (left: Self, right: Self) -> Bool {
        left.prices == right.prices && left.decimalPlaces == right.decimalPlaces && left.ignored == right.ignored
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
}
