import Foundation
import Testing
import VendConfig
import VendControl
import VendingCore

@testable import VendDisplay

/// The price the customer will pay, as the kiosk and the LCD show it: the band's, the card's,
/// and list 1's struck through when the customer pays less.
@Suite struct PriceViewTests {
    /// A1 costs 1,200 on list 1 and 1,000 in the band (900 by card #1); B4 has no band price.
    static func status(cardSession: String? = nil, band: Bool = true, credit: String = "0") -> StatusReport {
        var milk = StatusReport.Slot(
            id: "A1", product: "banana-milk", productName: "Banana Milk", price: band ? "1000" : "1200", priceText: band ? "1000" : "1200",
            available: 8, stock: 8, capacity: 8, earliestExpiry: nil)
        if band {
            milk.listPrice = "1200"
            milk.listPriceText = "1,200원"
            milk.cardPrices = [StatusReport.PaymentPrice(payment: "cashless1", price: "900", priceText: "900원")]
        }
        milk.sessionPrice = cardSession
        let latte = StatusReport.Slot(
            id: "B4", product: "hot-latte", productName: "Hot Café Latte", price: "1500", priceText: "1500", available: 3, stock: 3,
            capacity: 8, earliestExpiry: nil)
        var status = MachineViewTests.status(credit: credit, slots: [milk, latte])
        if band { status.priceBand = StatusReport.PriceBand(list: 2, name: "Happy hour", until: 0, untilText: "mon 17:00") }
        if cardSession != nil { status.cardSession = "cashless #1, funds not told" }
        return status
    }

    static func view(_ status: StatusReport, _ style: MachineView.Style = MachineViewTests.style(givesNoChange: false)) -> MachineView {
        MachineView(MachineViewTests.machine(status), style: style)
    }

    @Test func aBandsPriceWithListOneStruckThrough() {
        let view = Self.view(Self.status())
        #expect(view.slots.map(\.priceText) == ["1,000원", "1,500원"])
        #expect(view.slots.map(\.wasText) == ["1,200원", nil])
        #expect(view.priceNote == "Happy hour prices until 17:00")
        #expect(Self.view(Self.status(), MachineViewTests.style(.ko, givesNoChange: false)).priceNote == "Happy hour: 17:00까지 특별 가격")
        // Credit of 1,000 buys the band's price; the message asks for the band's too.
        #expect(Self.view(Self.status(credit: "1000")).slots.map(\.affordable) == [true, false])
        #expect(Self.view(Self.status(credit: "700")).message.text == "Insert 300원 more")
        let plain = Self.view(Self.status(band: false))
        #expect(plain.slots.map(\.wasText) == [nil, nil] && plain.priceNote == nil && plain.slots[0].priceText == "1,200원")
    }

    /// An open card session shows its card's price; a dearer one (a surcharge) has no "was".
    @Test func theCardPriceWhileASessionIsOpen() {
        let view = Self.view(Self.status(cardSession: "900"))
        #expect(view.slots.map(\.priceText) == ["900원", "1,500원"])
        #expect(view.slots[0].wasText == "1,200원")
        #expect(view.priceNote == "Prices shown are your card's")
        let surcharged = Self.view(Self.status(cardSession: "1300"))
        #expect(surcharged.slots[0].priceText == "1,300원" && surcharged.slots[0].wasText == nil)
    }

    /// The LCD has no room for every price: its fourth row says whose prices apply.
    @Test func theLCDSaysABandIsOn() {
        let style = MachineView.Style(
            texts: DisplayTexts(.en), format: MoneyFormat(template: "{amount} KRW")!, currency: MachineViewTests.won, faces: [:], hot: [],
            givesNoChange: false, asciiNames: true, pictureURL: { _ in nil })
        let rows = LCDFrame.rows(Self.view(Self.status(credit: "1000"), style), columns: 20, rows: 4, step: 0)
        #expect(rows == ["Credit     1,000 KRW", "Choose a product", "Buy: Banana Milk", "Happy hour prices un"])
    }

    /// Older daemons send none of the new fields: the JSON still decodes, prices as before.
    @Test func anOlderDaemonsStatusStillDecodes() throws {
        let json = #"{"id":"A1","product":"p","productName":"P","price":"1200","priceText":"1,200원","available":1,"stock":1,"capacity":8}"#
        let slot = try JSONDecoder().decode(StatusReport.Slot.self, from: Data(json.utf8))
        #expect(slot.customerPrice == "1200" && slot.listPrice == nil && slot.cardPrices == nil)
        let status = Self.status(cardSession: "800")
        let decoded = try JSONDecoder().decode(StatusReport.self, from: JSONEncoder().encode(status))
        #expect(decoded == status && decoded.priceBand?.untilText == "mon 17:00")
    }
}
