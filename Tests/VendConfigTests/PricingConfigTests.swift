import Foundation
import Testing
import VendConfig
import VendingCore

/// `pricing:` and the `prices` of slots and products: what the core gets, and the exact message
/// each mistake gets.
@Suite struct PricingConfigTests {
    static let base = """
        machine:
          currency: { code: USD, minor_digits: 2, format: "${amount}" }
          maximum_credit: "5.00"
        gpio:
          chip: gpiochip0
        products:
          - id: cola
            name: Cola
            category: [soda]
            prices:
              - { list: 2, price: "1.00" }
          - { id: water, name: Water, category: [water] }
        slots:
          - id: A1
            product: cola
            price: "1.50"
            prices:
              - { payment: cashless, price: "1.40" }
              - { list: 3, payment: cashless1, price: "1.10" }
            capacity: 10
            button: { line: 5 }
            relay: { line: 6 }
          - id: A2
            product: water
            price: "1.20"
            capacity: 10
            button: { line: 7 }
            relay: { line: 8 }
        mdb:
          port: unix:/run/mdb.sock
          changer:
            coins:
              - { type: 0, value: "0.05" }
              - { type: 1, value: "0.25" }
          cashless:
            - { reader: 1 }
        pricing:
          time_zone: Asia/Seoul
          lists:
            - { list: 2, name: "happy hour" }
            - { list: 3, name: staff }
          bands:
            - { list: 2, days: [mon, tue, wed, thu, fri], from: "15:00", to: "17:00" }
            - { list: 2, days: [sat], from: "22:00", to: "02:00" }
          card_lists:
            - { reader: 1, card: 0, list: 1 }
            - { reader: 1, card: 5, list: 3 }

        """

    static func errors(_ edits: [(String, String)]) throws -> [String] {
        try EditedConfig.errors(base, edits)
    }

    @Test func theCoreGetsTheListsBandsCardsAndZone() throws {
        let setup = try ConfigLoader.parse(Self.base, file: "test.yaml").machineSetup
        let usd = Currency(code: "USD", minorDigits: 2)
        func cents(_ amount: Int64) -> Money { Money(minorUnits: amount, currency: usd) }
        #expect(setup.pricing.lists == [2: "happy hour", 3: "staff"])
        #expect(
            setup.pricing.bands == [
                TimeBand(list: 2, days: [.monday, .tuesday, .wednesday, .thursday, .friday], from: 900, to: 1_020),
                TimeBand(list: 2, days: [.saturday], from: 1_320, to: 120),
            ])
        #expect(setup.pricing.cardLists == [.first: [0: 1, 5: 3]])
        #expect(setup.pricing.timeZone.name == "Asia/Seoul")
        #expect(setup.pricing.timeZone.offset(at: Instant(millisecondsSinceEpoch: 1_790_000_000_000)) == 9 * 3_600)
        #expect(setup.pricing.roundingUnit == 5, "the changer's smallest coin")
        #expect(
            setup.slots[0].priceLines == [
                PriceLine(list: 1, scope: .cashless, price: cents(140)), PriceLine(list: 3, scope: .cashless1, price: cents(110)),
            ])
        #expect(setup.catalog["cola"]?.priceLines == [PriceLine(list: 2, scope: .any, price: cents(100))])
        #expect(setup.slots[1].priceLines.isEmpty)
    }

    @Test func theSummarySaysTheListsBandsAndCardLists() throws {
        let summary = try ConfigLoader.parse(Self.base, file: "test.yaml").summary
        #expect(
            summary.contains(
                "\npricing   lists: 1 (the slots' prices), 2 happy hour (1 price), 3 staff (1 price); bands in Asia/Seoul: list 2 mon,tue,wed,thu,fri 15:00-17:00, list 2 sat 22:00-02:00; cashless #1 card lists 0→1, 5→3\n"
            ))
    }

    @Test func theSystemZoneReadsAsADSTZoneDoes() throws {
        let text = Self.base.replacingOccurrences(of: "Asia/Seoul", with: "Europe/Berlin")
        let zone = try ConfigLoader.parse(text, file: "test.yaml").machineSetup.pricing.timeZone
        // 2026-07-01 12:00Z is summer time (+2), 2026-12-01 winter (+1).
        #expect(zone.offset(at: Instant(millisecondsSinceEpoch: 1_782_907_200_000)) == 7_200)
        #expect(zone.offset(at: Instant(millisecondsSinceEpoch: 1_796_126_400_000)) == 3_600)
    }

    @Test func aFileWithoutPricingHasTheStandardPrices() throws {
        let end = try #require(Self.base.range(of: "pricing:\n"))
        let text = String(Self.base[..<end.lowerBound])
            .replacingOccurrences(of: "      - { list: 2, price: \"1.00\" }\n", with: "      - { payment: cash, price: \"1.00\" }\n")
            .replacingOccurrences(of: "list: 3, payment: cashless1", with: "payment: cashless1")
        let setup = try ConfigLoader.parse(text, file: "test.yaml").machineSetup
        #expect(setup.pricing == PricingSetup(roundingUnit: 5), "no lists, bands or card lists; UTC, never used")
        // Without lists, a list other than 1 is unknown.
        #expect(
            throws: ConfigError.self,
            performing: { try ConfigLoader.parse(String(Self.base[..<end.lowerBound]), file: "test.yaml") })
    }

    @Test func thePrintedConfigurationReadsBackTheSame() throws {
        let config = try ConfigLoader.parse(Self.base, file: "test.yaml")
        let printed = config.resolvedYAML
        #expect(printed.contains("pricing:") && printed.contains("prices:"))
        let again = try ConfigLoader.parse(printed, file: "printed.yaml")
        #expect(again.machineSetup == config.machineSetup)
        #expect(again.resolvedYAML == printed)
    }

    @Test func overlappingBandsAreRefused() throws {
        #expect(
            try Self.errors([("days: [sat], from: \"22:00\", to: \"02:00\"", "days: [thu], from: \"16:30\", to: \"18:00\"")]) == [
                "test.yaml:44:7: pricing.bands[#2]: overlaps band #1 (line 43, list 2 mon,tue,wed,thu,fri 15:00-17:00) at thu 16:30; a minute can be in one band only"
            ])
        // Saturday night runs into Sunday morning.
        #expect(
            try Self.errors([("days: [mon, tue, wed, thu, fri], from: \"15:00\", to: \"17:00\"", "days: [sun], from: \"01:00\", to: \"03:00\"")])
                == [
                    "test.yaml:44:7: pricing.bands[#2]: overlaps band #1 (line 43, list 2 sun 01:00-03:00) at sun 01:00; a minute can be in one band only"
                ])
    }

    @Test func aBandNeedsAKnownListOtherThanOneAndATime() throws {
        #expect(
            try Self.errors([("- { list: 2, days: [sat]", "- { list: 4, days: [sat]")]) == [
                "test.yaml:44:15: pricing.bands[#2].list: unknown price list 4 (lists: 1, 2, 3; define it under pricing.lists)"
            ])
        #expect(
            try Self.errors([("- { list: 2, days: [sat]", "- { list: 1, days: [sat]")]) == [
                "test.yaml:44:15: pricing.bands[#2].list: list 1 is the normal prices, in force outside every band: a band names another list"
            ])
        #expect(
            try Self.errors([("to: \"02:00\"", "to: \"22:00\"")]) == [
                "test.yaml:44:50: pricing.bands[#2].to: the band is empty: from and to are both 22:00 (a band across midnight ends on the next day)"
            ])
        #expect(
            try Self.errors([("from: \"15:00\"", "from: \"25:00\""), ("days: [sat]", "days: [sat, sta]")]) == [
                "test.yaml:43:57: pricing.bands[#1].from: '25:00' is not a time of day (write HH:MM in 24 hours, quoted: \"07:30\")",
                "test.yaml:44:30: pricing.bands[#2].days: 'sta' is not a day (write sun, mon, tue, wed, thu, fri, sat); did you mean 'sat'?",
            ])
    }

    @Test func aTimeZoneMustBeKnown() throws {
        #expect(
            try Self.errors([("Asia/Seoul", "Asia/Seol")]) == [
                "test.yaml:38:14: pricing.time_zone: unknown time zone 'Asia/Seol': no /usr/share/zoneinfo/Asia/Seol (see `timedatectl list-timezones`)"
            ])
        #expect(
            try Self.errors([("Asia/Seoul", "../../etc/passwd")]) == [
                "test.yaml:38:14: pricing.time_zone: '../../etc/passwd' is not a time zone name (write one like Europe/Berlin or Asia/Seoul)"
            ])
        #expect(
            try Self.errors([("Asia/Seoul", "leapseconds")]) == [
                "test.yaml:38:14: pricing.time_zone: /usr/share/zoneinfo/leapseconds is not a time zone file (TZif)"
            ])
    }

    @Test func aPriceLineFollowsThePriceRules() throws {
        #expect(
            try Self.errors([("{ list: 2, price: \"1.00\" }", "{ list: 2, price: \"6.00\" }")]) == [
                "test.yaml:11:27: products[cola].prices[#1].price: $6.00 is above machine.maximum_credit ($5.00), so it could never be paid"
            ])
        // Cards are not limited by the cash credit.
        _ = try ConfigLoader.parse(
            Self.base.replacingOccurrences(of: "payment: cashless, price: \"1.40\"", with: "payment: cashless, price: \"6.00\""), file: "t.yaml")
        #expect(
            try Self.errors([("{ list: 3, payment: cashless1, price: \"1.10\" }", "{ payment: cashless, price: \"1.10\" }")]) == [
                "test.yaml:19:9: slots[A1].prices[#2]: list 1 for cashless is already priced at line 18; give each list and payment one price"
            ])
        #expect(
            try Self.errors([("{ list: 3, payment: cashless1, price: \"1.10\" }", "{ list: 1, price: \"1.10\" }")]) == [
                "test.yaml:19:9: slots[A1].prices[#2]: list 1 for every payment is each slot's own price (slots[].price): name another list or a payment here"
            ])
        #expect(
            try Self.errors([("list: 3, payment: cashless1", "list: 9, payment: cash1")]) == [
                "test.yaml:19:17: slots[A1].prices[#2].list: unknown price list 9 (lists: 1, 2, 3; define it under pricing.lists)",
                "test.yaml:19:29: slots[A1].prices[#2].payment: 'cash1' is not one of 'any', 'cash', 'cashless', 'cashless1' or 'cashless2'; did you mean 'cash'?",
            ])
    }

    @Test func cardListsNeedTheirReader() throws {
        #expect(
            try Self.errors([("{ reader: 1, card: 5, list: 3 }", "{ reader: 2, card: 5, list: 3 }")]) == [
                "test.yaml:47:17: pricing.card_lists: there is no cashless #2 in mdb.cashless: its card lists would never be used"
            ])
        #expect(
            try Self.errors([("{ reader: 1, card: 5, list: 3 }", "{ reader: 1, card: 0, list: 3 }")]) == [
                "test.yaml:47:26: pricing.card_lists[#2].card: card list 0 of reader 1 is already mapped at line 46; map each card list once"
            ])
    }
}
