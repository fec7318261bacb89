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
}
