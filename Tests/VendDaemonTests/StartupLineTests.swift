import Testing
import VendControl

@testable import VendDaemon

/// The "vendd ready" line: a slot that holds stock but cannot sell is counted as stocked, and the
/// line says what holds it and what clears it.
@Suite(.timeLimit(.minutes(5))) struct StartupLineTests {
    static func slot(_ id: String, stock: Int, lock: String? = nil, fault: String? = nil) -> StatusReport.Slot {
        StatusReport.Slot(
            id: id, product: "milk", productName: "Milk", price: "1.00", priceText: "€1.00", available: lock == nil && fault == nil ? stock : 0,
            stock: stock, capacity: 8, earliestExpiry: nil, fault: fault, healthLock: lock)
    }

    static func status(_ slots: [StatusReport.Slot]) -> StatusReport {
        StatusReport(
            machine: "m", state: "in-service", stateReason: nil, currency: "EUR", credit: "0", creditText: "€0.00", acceptingCoins: true,
            vendInProgress: nil, simulated: true, coinAcceptor: "sim", gpio: "sim", slots: slots,
            books: .init(coinsIn: "0", sales: "0", refunds: "0", itemsSold: 0, failedVends: 0, unknownOutcomes: 0))
    }

    @Test func zoneLockedSlotsAreStockedAndTheLockIsNamed() {
        let line = Daemon.statusLine(
            Self.status([
                Self.slot("A1", stock: 3, lock: "chilled"), Self.slot("A2", stock: 2, lock: "chilled"), Self.slot("A3", stock: 5),
                Self.slot("B1", stock: 0), Self.slot("B2", stock: 1, fault: "jammed"),
            ]))
        #expect(
            line
                == "in-service, credit €0.00, 4/5 slots stocked; not selling: A1, A2 locked by zone chilled's food-safety check (vendctl zone service chilled); B2 locked by a motor fault, jammed (vendctl slot clear B2), simulated hardware"
        )
    }

    @Test func aMachineWithNothingHeldSaysOnlyTheCount() {
        #expect(
            Daemon.statusLine(Self.status([Self.slot("A1", stock: 3), Self.slot("A2", stock: 0)]))
                == "in-service, credit €0.00, 1/2 slots stocked, simulated hardware")
    }
}
