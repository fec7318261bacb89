/// A currency as the machine counts it: an ISO 4217-style code and how many minor digits a major
/// unit has (KRW 0, EUR 2, BHD 3). How amounts are *displayed* is `MoneyFormat`'s business.
public struct Currency: Hashable, Sendable, Codable, CustomStringConvertible {
    public let code: String
    public let minorDigits: Int

    /// The largest number of minor digits any circulating currency uses is 3; 4 leaves headroom.
    public static let minorDigitsRange = 0...4

    public init(code: String, minorDigits: Int) {
        precondition(Self.minorDigitsRange.contains(minorDigits), "minor digits out of range")
        self.code = code
        self.minorDigits = minorDigits
    }

    /// How many minor units make one major unit (100 for EUR, 1 for KRW).
    public var minorUnitsPerMajor: Int64 {
        (0..<minorDigits).reduce(1) { value, _ in value * 10 }
    }

    public var description: String { code }
}

/// An exact amount of money: integer minor units of one currency. Never floating point.
///
/// Arithmetic and comparison across currencies is a programming error (the machine has exactly
/// one currency, fixed by its configuration) and traps.
public struct Money: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let minorUnits: Int64
    public let currency: Currency

    public init(minorUnits: Int64, currency: Currency) {
        self.minorUnits = minorUnits
        self.currency = currency
    }

    public static func zero(_ currency: Currency) -> Money {
        Money(minorUnits: 0, currency: currency)
    }

    /// Whether a bill of this value may be stacked under a bill limit (`Machine.billLimit`, as
    /// `Effect.setBillLimit` hands it the validator); nil stacks none.
    public func isStackable(within limit: Money?) -> Bool {
        guard let limit else { return false }
        return currency == limit.currency && minorUnits > 0 && self <= limit
    }

    public var isZero: Bool { minorUnits == 0 }
    public var isNegative: Bool { minorUnits < 0 }

    public static func + (lhs: Money, rhs: Money) -> Money {
        sameCurrency(lhs, rhs)
        return Money(minorUnits: lhs.minorUnits + rhs.minorUnits, currency: lhs.currency)
    }

    public static func - (lhs: Money, rhs: Money) -> Money {
        sameCurrency(lhs, rhs)
        return Money(minorUnits: lhs.minorUnits - rhs.minorUnits, currency: lhs.currency)
    }

    public static func += (lhs: inout Money, rhs: Money) { lhs = lhs + rhs }
    public static func -= (lhs: inout Money, rhs: Money) { lhs = lhs - rhs }

    public static func * (lhs: Money, count: Int) -> Money {
        Money(minorUnits: lhs.minorUnits * Int64(count), currency: lhs.currency)
    }

    public static func < (lhs: Money, rhs: Money) -> Bool {
        sameCurrency(lhs, rhs)
        return lhs.minorUnits < rhs.minorUnits
    }

    private static func sameCurrency(_ lhs: Money, _ rhs: Money) {
        precondition(lhs.currency == rhs.currency, "mixed currencies: \(lhs.currency) and \(rhs.currency)")
    }

    /// The amount as a plain decimal number with exactly `minorDigits` fraction digits
    /// ("1.50", "1200", "-0.05"): the form used in state files and machine-readable output.
    public var decimalString: String {
        let magnitude = minorUnits.magnitude
        let perMajor = UInt64(currency.minorUnitsPerMajor)
        let sign = minorUnits < 0 ? "-" : ""
        guard currency.minorDigits > 0 else { return sign + String(magnitude) }
        let fraction = String(magnitude % perMajor)
        let padded = String(repeating: "0", count: currency.minorDigits - fraction.count) + fraction
        return "\(sign)\(magnitude / perMajor).\(padded)"
    }

    /// "1.50 EUR": unambiguous, for logs and state files.
    public var description: String { "\(decimalString) \(currency.code)" }
}

/// Why a decimal amount could not be read.
public enum MoneyParseError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case notADecimalNumber(String)
    /// A comma where the amount wants a point ("1,50") or nothing ("1,200"): `suggestion` is the
    /// amount as it must be typed.
    case comma(String, suggestion: String)
    case tooManyFractionDigits(String, allowed: Int)
    case tooLarge(String)

    public var description: String {
        switch self {
        case .empty:
            return "an amount is empty"
        case .notADecimalNumber(let text):
            return "'\(text)' is not a decimal amount (digits, optionally one '.' and fraction digits)"
        case .comma(let text, let suggestion):
            return suggestion.contains(".") && !text.contains(".")
                ? "'\(text)' is not a decimal amount: write it with a point, \(suggestion)"
                : "'\(text)' is not a decimal amount: write it without the comma, \(suggestion)"
        case .tooManyFractionDigits(let text, let allowed):
            return allowed == 0
                ? "'\(text)' has fraction digits, but the currency has no minor unit"
                : "'\(text)' has more than \(allowed) fraction digits"
        case .tooLarge(let text):
            return "'\(text)' is too large"
        }
    }
}

extension Money {
    /// Reads an exact decimal amount such as "1200", "1.5" or "0.75" in the given currency.
    /// Only ASCII digits and at most one '.' are accepted: no sign, no grouping, no exponent, so a
    /// typo can never turn into a different amount.
    public init(parsing text: String, currency: Currency) throws(MoneyParseError) {
        guard !text.isEmpty else { throw .empty }
        if text.contains(",") {
            // A decimal comma ("1,50") or a grouping one ("1,200"): refused, with the amount to type.
            let pointed = String(text.map { $0 == "," ? "." : $0 })
            let ungrouped = String(text.filter { $0 != "," })
            if text.count(where: { $0 == "," }) == 1, !text.contains("."), (try? Money(parsing: pointed, currency: currency)) != nil {
                throw .comma(text, suggestion: pointed)
            }
            let groups = text.split(separator: ".", maxSplits: 1).first?.split(separator: ",", omittingEmptySubsequences: false) ?? []
            if groups.dropFirst().allSatisfy({ $0.count == 3 }), (try? Money(parsing: ungrouped, currency: currency)) != nil {
                throw .comma(text, suggestion: ungrouped)
            }
            throw .notADecimalNumber(text)
        }
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty,
            whole.allSatisfy(\.isASCIIDigit)
        else { throw .notADecimalNumber(text) }
        let fraction = parts.count == 2 ? parts[1] : ""
        guard parts.count == 1 || (!fraction.isEmpty && fraction.allSatisfy(\.isASCIIDigit)) else {
            throw .notADecimalNumber(text)
        }
        guard fraction.count <= currency.minorDigits else {
            throw .tooManyFractionDigits(text, allowed: currency.minorDigits)
        }
        let paddedFraction = fraction + String(repeating: "0", count: currency.minorDigits - fraction.count)
        guard let units = Int64(whole + paddedFraction), units <= Money.largestAmount else {
            throw .tooLarge(text)
        }
        self.init(minorUnits: units, currency: currency)
    }

    /// No single amount handled by a vending machine comes near this; keeping inputs well below
    /// Int64's range means sums over years of sales cannot overflow.
    public static let largestAmount: Int64 = 1_000_000_000_000
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

extension Money: Codable {
    /// Encoded as "1.50 EUR": readable in a state file, and exact (the fraction digits carry the
    /// currency's minor digits, so nothing else needs storing).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        let parts = text.split(separator: " ")
        guard parts.count == 2, let amount = parts.first, let code = parts.last,
            !code.isEmpty, code.allSatisfy({ $0.isLetter || $0.isNumber })
        else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected an amount like '1.50 EUR', found '\(text)'")
        }
        let isNegative = amount.hasPrefix("-")
        let digits = isNegative ? amount.dropFirst() : amount[...]
        let minorDigits = digits.firstIndex(of: ".").map { digits.distance(from: $0, to: digits.endIndex) - 1 } ?? 0
        guard Currency.minorDigitsRange.contains(minorDigits) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "too many fraction digits in '\(text)'")
        }
        let currency = Currency(code: String(code), minorDigits: minorDigits)
        do {
            let magnitude = try Money(parsing: String(digits), currency: currency)
            self.init(minorUnits: isNegative ? -magnitude.minorUnits : magnitude.minorUnits, currency: currency)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(error)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
