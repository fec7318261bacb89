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

    /// Issue 40's day: a morning band (list 2) and an evening one (list 3) around list 1, a cash
    /// and a card sale in each part of the day, each at the price its list and payment decide,
    /// and the DEX audit's records of it (printed: the figures in the note).
    @Test func aDayAcrossTwoBandsAndTwoPaymentsInTheAudit() throws {
        let everyDay = Set(Weekday.allCases)
        let pricing = PricingSetup(
            lists: [2: "morning", 3: "evening"],
            bands: [TimeBand(list: 2, days: everyDay, from: 7 * 60, to: 10 * 60), TimeBand(list: 3, days: everyDay, from: 17 * 60, to: 20 * 60)])
        let setup = try MachineSetup(
            currency: Self.won, catalog: Catalog([Product(id: "cola", name: "Cola", category: CategoryPath(["soda"]))]),
            slots: [
                SlotSetup(
                    id: "A1", product: "cola", price: Self.won(1_200), capacity: 10,
                    priceLines: [
                        PriceLine(list: 1, scope: .cashless, price: Self.won(1_100)), PriceLine(list: 2, scope: .any, price: Self.won(1_000)),
                        PriceLine(list: 3, scope: .any, price: Self.won(1_400)),
                    ])
            ],
            maximumCredit: Self.won(10_000), payoutPolicy: .manual, pricing: pricing)
        var machine = Machine(setup: setup)
        // Monday 30 November 2026, UTC (the setup's time zone).
        let midnight: Int64 = 1_796_083_200_000
        func at(_ hour: Int, _ minute: Int = 0) -> Instant { Instant(millisecondsSinceEpoch: midnight + Int64(hour * 60 + minute) * 60_000) }
        _ = machine.apply(.restock("A1", count: nil, loadedAt: nil), at: at(6))
        _ = machine.apply(.cardReaderReady(.first, CardReaderReadiness(reader: .first, selectionFirst: true)), at: at(6))
        var vend: UInt64 = 0
        func cash(_ price: Int64, at instant: Instant) {
            vend += 1
            _ = machine.apply(.coinInserted(value: Self.won(price), event: CoinEventID(source: "test", sequence: vend)), at: instant)
            _ = machine.apply(.slotSelected("A1"), at: instant)
            _ = machine.apply(.vendEnded(VendID(rawValue: vend), .dropped), at: instant)
        }
        func card(at instant: Instant) {
            vend += 1
            _ = machine.apply(.slotSelected("A1"), at: instant)
            _ = machine.apply(.cardVendApproved(VendID(rawValue: vend), amount: nil), at: instant)
            _ = machine.apply(.vendEnded(VendID(rawValue: vend), .dropped), at: instant)
        }
        cash(1_000, at: at(8))
        card(at: at(8, 30))
        cash(1_200, at: at(12))
        card(at: at(12, 30))
        cash(1_400, at: at(18))
        card(at: at(18, 30))
        #expect(machine.ledger.sales == Self.won(3_600), "each cash sale at the price its list decided: the exact cash paid for each")
        #expect(machine.ledger.cardSales[.first]?.count == 3 && machine.ledger.cardSales[.first]?.amount == Self.won(3_500))
        #expect(machine.credit.minorUnits == 0)

        let segments = try Self.segments(machine)
        #expect(
            segments.filter { $0.hasPrefix("PA7") } == [
                "PA7*A1*CA*1*1200*1*1200*1*1200", "PA7*A1*CA*2*1000*1*1000*1*1000", "PA7*A1*CA*3*1400*1*1400*1*1400",
                "PA7*A1*DA*1*1100*1*1100*1*1100", "PA7*A1*DA*2*1000*1*1000*1*1000", "PA7*A1*DA*3*1400*1*1400*1*1400",
            ])
        #expect(segments.contains("VA1*7100*6*7100*6"), "six paid vends, 7,100원")
        print("a day across two bands and two payments, the DEX audit's records:")
        for segment in segments where ["VA1", "PA1", "PA2", "PA7", "DA2", "CA2"].contains(where: segment.hasPrefix) { print("  \(segment)") }
    }
}
