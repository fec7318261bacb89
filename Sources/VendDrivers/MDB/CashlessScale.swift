import MDB
import VendingCore

/// A reader's money: P scaled units are P · X · 10^−Y major units (MDB §7.1), X the scale
/// factor and Y the decimal places of its READER CONFIG DATA. Exact both ways or not at all.
struct CashlessScale: Equatable {
    let currency: Currency
    /// One scaled unit is `numerator / denominator` minor units of `currency`.
    private let numerator: Int64
    private let denominator: Int64

    init(_ config: ReaderConfig, currency: Currency) {
        self.currency = currency
        // X · 10^(minor digits − Y) minor units per scaled unit.
        let shift = currency.minorDigits - Int(config.decimalPlaces)
        let power = (0..<abs(shift)).reduce(Int64(1)) { value, _ in value * 10 }
        numerator = Int64(config.scaleFactor) * (shift >= 0 ? power : 1)
        denominator = shift >= 0 ? 1 : power
    }

    /// One scaled unit in minor units, at least one.
    var minorUnitsPerUnit: Int64 { max(1, numerator / denominator) }

    func money(_ scaled: UInt32) -> Money? {
        let units = Int64(scaled) * numerator
        guard units % denominator == 0 else { return nil }
        return Money(minorUnits: units / denominator, currency: currency)
    }

    /// Nil when the amount is not a whole number of scaled units or does not fit `width` bytes.
    func scaled(_ money: Money, width: Int) -> UInt32? {
        guard money.currency == currency, !money.isNegative else { return nil }
        let units = money.minorUnits * denominator
        guard units % numerator == 0 else { return nil }
        let value = units / numerator
        let limit: Int64 = width == 4 ? Int64(UInt32.max) - 1 : Int64(UInt16.max) - 1
        return value <= limit ? UInt32(value) : nil
    }
}
