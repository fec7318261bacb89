import Testing

@testable import VendDEX

/// The prices a handheld's configuration carries (EVA-DTS 6.1.1: PC101 product identifier,
/// PC102 price to be set, in minor units; PA1 the same for the audit's own record).
@Suite struct DEXConfigurationTests {
    @Test func pricesDecimalsRefusalsAndIgnoredSegments() {
        let text =
            "DXS*HHD0000001*VA*V0/6*1\r\nST*001*0001\r\nID4*2*978*EUR\r\nPC1*A1*175*COLA\r\nPA1*B2*90\nPC1**100\r\nPC1*C3*1.50\r\nPC1*C4\r\nSE*8*0001\r\n"
        let configuration = DEXConfiguration(text: Array(text.utf8))
        #expect(configuration.decimalPlaces == 2)
        #expect(configuration.prices.map(\.selection) == ["A1", "B2"])
        #expect(configuration.prices.map(\.minorUnits) == [175, 90])
        #expect(configuration.prices.first?.segment == "PC1*A1*175*COLA")
        #expect(configuration.refused.map(\.segment) == ["PC1**100", "PC1*C3*1.50", "PC1*C4"])
        #expect(configuration.refused[1].reason == "the price '1.50' is not a whole number of minor units")
        #expect(configuration.ignored == ["DXS", "ST", "SE"])
    }

    @Test func anAbsurdPriceIsNoNumberAtAll() {
        let configuration = DEXConfiguration(text: Array("PC1*A1*9999999999999999999\r\n".utf8))
        #expect(configuration.prices.isEmpty && configuration.refused.count == 1)
    }

    /// LA1 (price list, product, price, then sales counts a configuration does not set) and PA7
    /// (product, payment device, list, price, then sales) set a list's line; PA1 and PC1 list 1
    /// for every payment. vendd's lists start at 1: list 0 (some telemeters' cash list) is
    /// refused, not guessed.
    @Test func priceListsAndPaymentDevices() {
        let text = [
            "LA1*2*A1*1400*0*12", "PA7*A2*DA*3*1900*0*0*0*0", "PA7*A3*CA*1*1500", "PC1*A4*1600",
            "LA1*0*A1*1300", "LA1*1000*A1*1300", "LA1*x*A1*1300", "PA7*A2*DC*2*1900", "PA7*A2*DA*2*", "LA1*2*A1",
        ].map { $0 + "\r\n" }.joined()
        let configuration = DEXConfiguration(text: Array(text.utf8))
        let prices = configuration.prices.map { "\($0.selection) \($0.minorUnits) list \($0.list) \($0.payment ?? "any")" }
        #expect(prices == ["A1 1400 list 2 any", "A2 1900 list 3 cashless1", "A3 1500 list 1 cash", "A4 1600 list 1 any"])
        #expect(
            configuration.refused.map(\.reason) == [
                "price list 0: this machine numbers its lists from 1 (list 1 is the normal prices, as its audit's PA7 says)",
                "the price list '1000' is not a number of up to 3 digits",
                "the price list 'x' is not a number of up to 3 digits",
                "the payment device 'DC' is none of CA (cash), DA (cashless 1), DB (cashless 2)",
                "no price",
                "a price record needs a selection and a price",
            ])
        #expect(configuration.ignored.isEmpty)
    }
}
