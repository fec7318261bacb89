/// How amounts are shown to people, taken from configuration so that no unit or symbol is
/// hard-coded: `{amount}원` shows "1,200원", `€{amount}` shows "€1.50", `{amount} Kč` shows "12,50 Kč"
/// with a "," decimal separator.
public struct MoneyFormat: Hashable, Sendable, Codable {
    /// The placeholder the template must contain exactly once.
    public static let placeholder = "{amount}"

    public let template: String
    public let groupingSeparator: String
    public let decimalSeparator: String

    /// Returns nil when the template does not contain `{amount}` exactly once.
    public init?(template: String, groupingSeparator: String = ",", decimalSeparator: String = ".") {
        guard template.occurrences(of: Self.placeholder) == 1 else { return nil }
        self.template = template
        self.groupingSeparator = groupingSeparator
        self.decimalSeparator = decimalSeparator
    }

    /// A neutral format for when none is configured: "1.50 EUR".
    public static func plain(_ currency: Currency) -> MoneyFormat {
        MoneyFormat(template: "{amount} \(currency.code)", groupingSeparator: "", decimalSeparator: ".")!
    }

    public func string(for money: Money) -> String {
        let perMajor = UInt64(money.currency.minorUnitsPerMajor)
        let magnitude = money.minorUnits.magnitude
        var number = grouped(String(magnitude / perMajor))
        if money.currency.minorDigits > 0 {
            let fraction = String(magnitude % perMajor)
            number +=
                decimalSeparator
                + String(repeating: "0", count: money.currency.minorDigits - fraction.count) + fraction
        }
        let shown = template.replacingFirst(Self.placeholder, with: number)
        return money.isNegative ? "-" + shown : shown
    }

    private func grouped(_ digits: String) -> String {
        guard !groupingSeparator.isEmpty, digits.count > 3 else { return digits }
        var groups: [Substring] = []
        var end = digits.endIndex
        while end > digits.startIndex {
            let start = digits.index(end, offsetBy: -3, limitedBy: digits.startIndex) ?? digits.startIndex
            groups.append(digits[start..<end])
            end = start
        }
        return groups.reversed().joined(separator: groupingSeparator)
    }
}

extension String {
    func occurrences(of needle: String) -> Int {
        guard !needle.isEmpty else { return 0 }
        var count = 0
        var rest = self[...]
        while let range = rest.range(of: needle) {
            count += 1
            rest = rest[range.upperBound...]
        }
        return count
    }

    func replacingFirst(_ needle: String, with replacement: String) -> String {
        guard let range = range(of: needle) else { return self }
        return String(self[..<range.lowerBound]) + replacement + String(self[range.upperBound...])
    }
}

extension Substring {
    /// A plain substring search; the standard library's `range(of:)` lives in Foundation, which
    /// the core does not import.
    func range(of needle: String) -> Range<Index>? {
        var start = startIndex
        while start < endIndex {
            if self[start...].starts(with: needle) {
                return start..<index(start, offsetBy: needle.count)
            }
            start = index(after: start)
        }
        return nil
    }
}

extension String {
    func range(of needle: String) -> Range<Index>? {
        self[...].range(of: needle)
    }
}
