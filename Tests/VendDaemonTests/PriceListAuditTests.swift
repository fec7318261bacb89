import Testing
import VendControl
import VendDEX
import VendingCore

@testable import VendDaemon

/// From the books to the DEX file: a machine with price lists reports each selection's sales per
/// payment device and list (EVA-DTS PA7); one without keeps its PA2-only audit.
@Suite struct PriceListAuditTests {
    static let won = Currency(code: "KRW", minorDigits: 0)
    static func won(_ amount: Int64) -> Money { Money(minorUnits: amount, currency: won) }
    static let start = Instant(millisecondsSinceEpoch: 1_790_000_000_000)

    static func machine(priced: Bool) -> Machine {
        let setup = try! MachineSetup(
            currency: won, catalog: Catalog([Product(id: "cola", name: "Cola", category: CategoryPath(["soda"]))]),
            slots: [
                SlotSetup(
                    id: "A1", product: "cola", price: won(1_200), capacity: 5,
                    priceLines: priced ? [PriceLine(list: 1, scope: .cashless, price: won(1_100))] : [])
            ],
            maximumCredit: won(10_000), payoutPolicy: .manual)
        var machine = Machine(setup: setup)
        _ = machine.apply(.restock("A1", count: nil, loadedAt: nil), at: start)
        _ = machine.apply(.coinInserted(value: won(1_200), event: CoinEventID(source: "test", sequence: 1)), at: start)
        _ = machine.apply(.slotSelected("A1"), at: start)
        _ = machine.apply(.vendEnded(VendID(rawValue: 1), .dropped), at: start)
        _ = machine.apply(.cardReaderReady(.first, CardReaderReadiness(reader: .first, selectionFirst: true)), at: start)
        _ = machine.apply(.slotSelected("A1"), at: start)
        _ = machine.apply(.cardVendApproved(VendID(rawValue: 2), amount: nil), at: start)
        _ = machine.apply(.vendEnded(VendID(rawValue: 2), .dropped), at: start)
        return machine
    }

    static func segments(_ machine: Machine) throws -> [String] {
        let reports = Reports(machine: machine, format: MoneyFormat(template: "{amount}원")!, machineName: "test", levelSensedCoins: false)
        let audit = try DEXAudit(reports.sales(since: nil, at: start), communicationID: "VDD0000001", asset: "1")
        return DEXWriter.file(audit).components(separatedBy: "\r\n")
    }

    @Test func eachListAndPaymentHasItsPA7() throws {
        let segments = try Self.segments(Self.machine(priced: true))
        #expect(segments.filter { $0.hasPrefix("PA7") } == ["PA7*A1*CA*1*1200*1*1200*1*1200", "PA7*A1*DA*1*1100*1*1100*1*1100"])
    }

    @Test func aMachineWithoutListsSendsNoPA7() throws {
        let segments = try Self.segments(Self.machine(priced: false))
        #expect(!segments.contains { $0.hasPrefix("PA7") })
        #expect(segments.contains("PA2*2*2400*2*2400"))
    }
}
