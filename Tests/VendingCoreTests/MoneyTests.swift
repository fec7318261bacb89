import Foundation
import Testing
import VendingCore

@Suite struct MoneyTests {
    func won(_ amount: Int64) -> Money { Fixtures.won(amount) }
    let euro = Fixtures.euro
    let dinar = Currency(code: "BHD", minorDigits: 3)

    @Test(arguments: [
        ("1200", 0, Int64(1200)), ("0", 0, 0), ("1.5", 2, 150), ("1.50", 2, 150), ("0.75", 2, 75),
        ("12", 2, 1200), ("0.005", 3, 5), ("1000000000000", 0, 1_000_000_000_000),
    ])
    func parsesExactDecimals(text: String, digits: Int, units: Int64) throws {
        let currency = Currency(code: "X", minorDigits: digits)
        #expect(try Money(parsing: text, currency: currency) == Money(minorUnits: units, currency: currency))
    }

    @Test(arguments: [
        ("", 2, MoneyParseError.empty),
        ("1,200", 0, .comma("1,200", suggestion: "1200")),
        ("1,50", 2, .comma("1,50", suggestion: "1.50")),
        ("1,200.50", 2, .comma("1,200.50", suggestion: "1200.50")),
        ("1,2,3", 2, .notADecimalNumber("1,2,3")),
        ("-5", 2, .notADecimalNumber("-5")),
        ("1.", 2, .notADecimalNumber("1.")),
        (".5", 2, .notADecimalNumber(".5")),
        ("1.2.3", 2, .notADecimalNumber("1.2.3")),
        ("1e3", 2, .notADecimalNumber("1e3")),
        (" 1", 2, .notADecimalNumber(" 1")),
        ("١٢", 0, .notADecimalNumber("١٢")),
        ("1.505", 2, .tooManyFractionDigits("1.505", allowed: 2)),
        ("1.5", 0, .tooManyFractionDigits("1.5", allowed: 0)),
        ("1000000000001", 0, .tooLarge("1000000000001")),
        ("99999999999999999999999", 0, .tooLarge("99999999999999999999999")),
    ])
    func rejectsAnythingButAPlainDecimal(text: String, digits: Int, error: MoneyParseError) {
        #expect(throws: error) { try Money(parsing: text, currency: Currency(code: "X", minorDigits: digits)) }
    }

    @Test func formatsFromTheConfiguredPattern() throws {
        let wonFormat = try #require(MoneyFormat(template: "{amount}원"))
        #expect(wonFormat.string(for: won(1_200)) == "1,200원")
        #expect(wonFormat.string(for: won(500)) == "500원")
        #expect(wonFormat.string(for: won(1_234_567)) == "1,234,567원")
        let euroFormat = try #require(MoneyFormat(template: "€{amount}"))
        #expect(euroFormat.string(for: Money(minorUnits: 150, currency: euro)) == "€1.50")
        #expect(euroFormat.string(for: Money(minorUnits: 5, currency: euro)) == "€0.05")
        let dollars = try #require(MoneyFormat(template: "${amount}"))
        #expect(dollars.string(for: Money(minorUnits: 75, currency: euro)) == "$0.75")
        let czech = try #require(MoneyFormat(template: "{amount} Kč", groupingSeparator: ".", decimalSeparator: ","))
        #expect(czech.string(for: Money(minorUnits: 123_450, currency: euro)) == "1.234,50 Kč")
        #expect(euroFormat.string(for: Money(minorUnits: -250, currency: euro)) == "-€2.50")
        #expect(MoneyFormat.plain(dinar).string(for: Money(minorUnits: 1_005, currency: dinar)) == "1.005 BHD")
    }

    @Test func aTemplateNeedsExactlyOnePlaceholder() {
        #expect(MoneyFormat(template: "EUR") == nil)
        #expect(MoneyFormat(template: "{amount}{amount}") == nil)
        #expect(MoneyFormat(template: "{amount}") != nil)
    }

    @Test func arithmeticAndOrderAreExact() {
        #expect(won(700) + won(500) == won(1_200))
        #expect(won(700) - won(1_000) == won(-300))
        #expect(won(300) * 4 == won(1_200))
        #expect(won(999) < won(1_000))
        #expect(Money(minorUnits: -1, currency: euro).decimalString == "-0.01")
    }

    @Test func encodesAsReadableExactText() throws {
        for money in [
            won(1_200), Money(minorUnits: 150, currency: euro), Money(minorUnits: -5, currency: euro),
            Money(minorUnits: 1_005, currency: dinar), .zero(euro),
        ] {
            #expect(try JSON.roundTrip(money) == money)
        }
        #expect(try JSON.text(Money(minorUnits: 150, currency: euro)) == #""1.50 EUR""#)
        #expect(try JSON.text(won(1_200)) == #""1200 KRW""#)
    }
}

@Suite struct MoneyDecodingTests {
    @Test(arguments: ["1.50", "abc EUR", "1.50 EUR extra", "1.5.0 EUR", "1.50 E-R", "1.123456 EUR", "\"\""])
    func rejectsMalformedStoredAmounts(text: String) {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Money.self, from: Data("\"\(text)\"".utf8))
        }
    }
}
