import MDB
import VendHardware
import VendSettings
import VendingCore

/// How a device is named in what the technician reads about its table.
struct MDBTableWording {
    /// "coin changer", "bill validator"
    let device: String
    /// "coin", "bill"
    let item: String
}

extension [MDBDenomination] {
    /// The types of the technician's table whose value the device's SETUP confirms, by type, and
    /// a fault notice for every other one (refused, loudly: crediting a value the device does not
    /// mean would put wrong money in the books).
    func confirmed(
        by currency: MDBCurrencyCode, expectedNumeric: Int?, machineCurrency: Currency, wording: MDBTableWording,
        reportedValue: (Int) -> Int64?
    ) -> (values: [Int: Money], refusals: [String]) {
        if let expectedNumeric, currency.iso4217Numeric != expectedNumeric {
            return (
                [:],
                [
                    "the \(wording.device) uses \(currency), mdb.currency_code says ISO 4217 \(expectedNumeric) (\(machineCurrency.code)): no \(wording.item) is accepted"
                ]
            )
        }
        var values: [Int: Money] = [:]
        var refusals: [String] = []
        for row in self {
            let reported = reportedValue(row.type)
            guard reported == row.value.minorUnits else {
                refusals.append(
                    "\(row.origin): \(wording.item) type \(row.type) is \(row.value.decimalString) in the table but \(reported.map(String.init) ?? "unused") in the \(wording.device)'s SETUP: that type is refused. Correct the table"
                )
                continue
            }
            values[row.type] = row.value
        }
        return (values, refusals)
    }
}
