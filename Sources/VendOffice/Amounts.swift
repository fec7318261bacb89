import VendFleetStore
import VendingCore

/// An exact amount as the machines send it ("1.50" EUR, "1200" KRW): minor units and the digits
/// after the point. Sums keep the most digits seen.
struct Amount: Equatable {
    var units: Int64
    var digits: Int

    static let zero = Amount(units: 0, digits: 0)

    /// Nil for anything but ASCII digits with at most one '.' (what vendd sends).
    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            parts.count == 1 || !parts[1].isEmpty, parts.count == 1 || parts[1].count <= 4, let units = Int64(parts.joined()),
            units <= Money.largestAmount
        else { return nil }
        self.units = units
        digits = parts.count == 2 ? parts[1].count : 0
    }

    init(units: Int64, digits: Int) {
        self.units = units
        self.digits = digits
    }

    /// A sum as the sales tables hold it (`SaleColumns.scale` digits), shown with `digits`.
    init(stored units: Int64, digits: Int) {
        var units = units
        for _ in digits..<max(digits, SaleColumns.scale) { units /= 10 }
        self.init(units: units, digits: digits)
    }

    static func + (left: Amount, right: Amount) -> Amount {
        let digits = max(left.digits, right.digits)
        return Amount(units: left.units(at: digits) + right.units(at: digits), digits: digits)
    }

    /// By value: "1.5" and "1.50" are neither less than the other.
    static func lessThan(_ left: Amount, _ right: Amount) -> Bool {
        let digits = max(left.digits, right.digits)
        return left.units(at: digits) < right.units(at: digits)
    }

    static func * (left: Amount, count: Int64) -> Amount { Amount(units: left.units * count, digits: left.digits) }
}

/// Amounts shown as the operator's file says per currency (VendingCore's MoneyFormat: no unit
/// hard-coded), else "1,200 KRW".
struct AmountFormatter {
    let formats: [String: MoneyFormat]

    private static let bare = MoneyFormat(template: MoneyFormat.placeholder, groupingSeparator: ",", decimalSeparator: ".")!

    func string(_ amount: Amount, currency code: String) -> String {
        let format =
            formats[code]
            ?? MoneyFormat(template: "{amount} \(code)", groupingSeparator: ",", decimalSeparator: ".")
            // A code that itself holds "{amount}" (a hostile machine) is shown without it.
            ?? Self.bare
        return format.string(for: Money(minorUnits: amount.units, currency: Currency(code: code, minorDigits: amount.digits)))
    }
}

extension Amount {
    /// An amount that may be negative ("-500", "-0.50"): a difference.
    static func signed(_ text: String) -> Amount? {
        guard let amount = Amount(text.hasPrefix("-") ? String(text.dropFirst()) : text) else { return nil }
        return Amount(units: text.hasPrefix("-") ? -amount.units : amount.units, digits: amount.digits)
    }

    /// `self` × `count`, nil beyond 64 bits.
    func times(_ count: Int64) -> Amount? {
        let (product, overflow) = units.multipliedReportingOverflow(by: count)
        return overflow ? nil : Amount(units: product, digits: digits)
    }

    /// The minor units at `digits` (at least its own) after the point; Int64.max beyond 64 bits.
    func units(at digits: Int) -> Int64 { checkedUnits(at: digits) ?? .max }

    /// The minor units at `wanted` digits (at least its own) after the point; nil beyond 64 bits.
    func checkedUnits(at wanted: Int) -> Int64? {
        var value = units
        for _ in digits..<max(digits, wanted) {
            let (scaled, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = scaled
        }
        return value
    }
}
