import Testing
import VendConfig
import VendControl
import VendingCore

@testable import VendDisplay

/// A slot stopped because its next item is past its shelf life shows as not available (on the
/// kiosk and the LCD), not as sold out: a customer should not wait for a restock.
@Suite struct ExpiredSlotViewTests {
    @Test func anExpiredSlotIsNotAvailableNotSoldOut() {
        let slots = MachineViewTests.status(credit: "0").slots.map { slot in
            StatusReport.Slot(
                id: slot.id, product: slot.product, productName: slot.productName, price: slot.price, priceText: slot.priceText,
                available: slot.id == "A1" ? 0 : slot.available, stock: 8, capacity: 8, earliestExpiry: nil,
                expired: slot.id == "A1" ? 1_790_000_000_000 : nil)
        }
        let machine = MachineViewTests.machine(MachineViewTests.status(credit: "2000", slots: slots))
        #expect(MachineView(machine, style: MachineViewTests.style()).slots.first?.badge == "Not available")
        #expect(MachineView(machine, style: MachineViewTests.style(.ko)).slots.first?.badge == "판매 중지")
        let refused = MachineFollower.explain(
            refusal: "slot A1's items are past their shelf life", selecting: "A1", in: machine, currency: MachineViewTests.won)
        #expect(refused == .notAvailable(product: "banana-milk"))
    }
}
