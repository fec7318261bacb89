import Foundation
import Testing
import VendingCore

/// The price a customer pays: decided once, at the selection, from the payment, the band in force
/// and the card's session; what the reader is asked, what the books keep and what a refund gives.
@Suite struct PricingTests {
    /// Korea: UTC+9 all year.
    static let seoul = TimeZoneRules(name: "Asia/Seoul", initialOffset: 9 * 3_600, transitions: [])
    /// Monday 21 September 2026, 14:59:50 in Seoul: ten seconds before the band.
    static let beforeBand = Instant(millisecondsSinceEpoch: 1_789_970_390_000)
    static let inBand = beforeBand + .seconds(3_600)
    static let weekend = beforeBand + .seconds(5 * 86_400 + 3_600)

    static let happyHour = TimeBand(
        list: 2, days: [.monday, .tuesday, .wednesday, .thursday, .friday], from: 15 * 60, to: 17 * 60)

    static func setup(rounding: Int64 = 50) -> MachineSetup {
        func won(_ amount: Int64) -> Money { Fixtures.won(amount) }
        let cola = Product(
            id: "cola", name: "Cola", category: CategoryPath(["beverage", "soda", "cola"]),
            priceLines: [PriceLine(list: 2, scope: .any, price: won(1_300))])
        return try! MachineSetup(
            currency: Fixtures.won, catalog: Catalog([Fixtures.milk, cola, Fixtures.coffee]),
            slots: [
                SlotSetup(
                    id: "A1", product: "milk", price: won(1_200), capacity: 8,
                    priceLines: [
                        PriceLine(list: 1, scope: .cashless, price: won(1_100)),
                        PriceLine(list: 2, scope: .any, price: won(1_000)),
                        PriceLine(list: 2, scope: .cashless1, price: won(900)),
                        PriceLine(list: 3, scope: .any, price: won(800)),
                    ]),
                SlotSetup(id: "A2", product: "cola", price: won(1_500), capacity: 10),
                SlotSetup(id: "B1", product: "coffee", price: won(900), capacity: 6),
            ],
            maximumCredit: won(10_000),
            payoutPolicy: .manual,
            pricing: PricingSetup(
                lists: [2: "happy hour", 3: "staff"], bands: [happyHour], cardLists: [.first: [1: 3, 2: 2]], timeZone: seoul,
                roundingUnit: rounding))
    }

    struct Row: Sendable, CustomStringConvertible {
        let slot: SlotID
        let payment: PricePayment
        let terms: CardPriceTerms
        let at: Instant
        let price: Int64
        let list: PriceListNumber
        let charge: Int64

        var description: String { "\(slot) \(payment) \(terms) at \(at)" }
    }

    static let table: [Row] = [
        // Cash: list 1 outside the band, list 2 in it; a product's line for a slot with none.
        Row(slot: "A1", payment: .cash, terms: .standard, at: beforeBand, price: 1_200, list: 1, charge: 1_200),
        Row(slot: "A1", payment: .cash, terms: .standard, at: inBand, price: 1_000, list: 2, charge: 1_000),
        Row(slot: "A1", payment: .cash, terms: .standard, at: weekend, price: 1_200, list: 1, charge: 1_200),
        Row(slot: "A2", payment: .cash, terms: .standard, at: inBand, price: 1_300, list: 2, charge: 1_300),
        Row(slot: "A2", payment: .cash, terms: .standard, at: beforeBand, price: 1_500, list: 1, charge: 1_500),
        // A list with no price for the slot sells at list 1, and says so.
        Row(slot: "B1", payment: .cash, terms: .standard, at: inBand, price: 900, list: 1, charge: 900),
        // Cards: the reader's own line, then cards', then every payment's.
        Row(slot: "A1", payment: .cashless(.first), terms: .standard, at: beforeBand, price: 1_100, list: 1, charge: 1_100),
        Row(slot: "A1", payment: .cashless(.first), terms: .standard, at: inBand, price: 900, list: 2, charge: 900),
        Row(slot: "A1", payment: .cashless(.second), terms: .standard, at: inBand, price: 1_000, list: 2, charge: 1_000),
        Row(slot: "A1", payment: .cashless(.second), terms: .standard, at: beforeBand, price: 1_100, list: 1, charge: 1_100),
        // A card's list, mapped (EVA §5.1.7), wins over the band; an unknown one is list 1.
        Row(
            slot: "A1", payment: .cashless(.first), terms: .priceList(userGroup: 4, list: 1), at: beforeBand, price: 800, list: 3,
            charge: 800),
        Row(slot: "A1", payment: .cashless(.first), terms: .priceList(userGroup: 4, list: 1), at: inBand, price: 800, list: 3, charge: 800),
        Row(slot: "A1", payment: .cashless(.first), terms: .priceList(userGroup: 0, list: 7), at: inBand, price: 900, list: 2, charge: 900),
        Row(
            slot: "A1", payment: .cashless(.first), terms: .priceList(userGroup: 0, list: 7), at: beforeBand, price: 1_100, list: 1,
            charge: 1_100),
        Row(
            slot: "A1", payment: .cashless(.second), terms: .priceList(userGroup: 0, list: 1), at: beforeBand, price: 1_100, list: 1,
            charge: 1_100),
        Row(
            slot: "A1", payment: .cashless(.first), terms: .discountGroup(userGroup: 0, group: 2), at: beforeBand, price: 900, list: 2,
            charge: 900),
        // The reader takes a percentage: the price asked stays the list's, the charge expected is
        // rounded to the smallest coin (50): 990 → 1,000; 1,155 → 1,150.
        Row(slot: "A1", payment: .cashless(.first), terms: .discount(percent: 10), at: beforeBand, price: 1_100, list: 1, charge: 1_000),
        Row(slot: "A1", payment: .cashless(.first), terms: .surcharge(percent: 5), at: beforeBand, price: 1_100, list: 1, charge: 1_150),
        Row(slot: "A1", payment: .cashless(.first), terms: .discount(percent: 100), at: inBand, price: 900, list: 2, charge: 0),
    ]

    @Test(arguments: table) func priceByPaymentBandAndCard(_ row: Row) throws {
        let decision = try #require(
            Self.setup().decidePrice(
                of: row.slot, listOnePrice: Self.setup().slot(row.slot)!.price, payment: row.payment, terms: row.terms, at: row.at))
        #expect(decision.price == Fixtures.won(row.price))
        #expect(decision.list == row.list)
        #expect(decision.expectedCharge == Fixtures.won(row.charge))
        #expect(decision.band == (row.at == Self.inBand ? Self.happyHour : nil))
    }

    /// To the nearest multiple of the unit; a half goes the customer's way.
    @Test func roundingToTheSmallestCoin() {
        let pricing = PricingSetup(roundingUnit: 500)
        func won(_ amount: Int64) -> Money { Fixtures.won(amount) }
        #expect(pricing.adjusted(won(1_000), percent: 25, discount: true) == won(500), "750 is half way: down")
        #expect(pricing.adjusted(won(1_000), percent: 20, discount: true) == won(1_000), "800 is nearer 1,000")
        #expect(pricing.adjusted(won(1_000), percent: 30, discount: true) == won(500), "700 is nearer 500")
        #expect(pricing.adjusted(won(1_000), percent: 25, discount: false) == won(1_000), "1,250 is half way: down")
        #expect(pricing.adjusted(won(1_000), percent: 100, discount: true) == won(0))
        #expect(PricingSetup(roundingUnit: 1).adjusted(won(999), percent: 33, discount: true) == won(669), "669.33 to the won")
        #expect(PricingSetup(roundingUnit: 0).roundingUnit == 1, "no coin: the minor unit")
    }

    /// A reader that adds a surcharge may take more than the price asked: a vend whose approval
    /// vendd never saw is booked as possibly charged at the most it may have taken, rounded up
    /// (1,100 + 5 % = 1,155 → 1,200 in coins of 50), never at the price alone.
    @Test func aSurchargedVendWhoseApprovalWasNotSeenIsPossiblyChargedTheSurcharge() throws {
        #expect(PricingSetup(roundingUnit: 50).mostCharged(Fixtures.won(1_100), surcharge: 5) == Fixtures.won(1_200))
        #expect(PricingSetup(roundingUnit: 50).mostCharged(Fixtures.won(1_000), surcharge: 5) == Fixtures.won(1_050), "exact: not rounded")
        var rig = Rig(setup: Self.setup())
        rig.now = Self.beforeBand
        rig.apply(.cardReaderReady(.first, CardReaderReadiness(reader: .first, selectionFirst: false)))
        rig.apply(.cardSessionBegan(.first, funds: nil, media: .normal, terms: .surcharge(percent: 5)))
        let requested = rig.select("A1")
        let cut = try #require(rig.pendingVend)
        #expect(requested.contains(.requestCardVend(.first, cut, price: Fixtures.won(1_100), slot: "A1")), "the request is the price")
        rig.apply(.cardVendUnresolved(cut))
        #expect(rig.machine.ledger.cardPossiblyCharged[.first]?.amount == Fixtures.won(1_200))

        rig.select("A1")
        let unknown = try #require(rig.pendingVend)
        let settled = rig.apply(.vendEnded(unknown, .unknown))
        let settlement = try #require(settled.compactMap { if case .settleCardVend(let asked) = $0 { asked } else { nil } }.first)
        #expect(settlement.requested == Fixtures.won(1_200) && settlement.atStake == Fixtures.won(1_200))
    }

    /// A run-time price (`vendctl price`) replaces list 1 for every payment, not the other lines.
    @Test func aPriceSetAtRunTimeIsListOne() {
        var rig = Rig(setup: Self.setup())
        rig.now = Self.beforeBand
        rig.apply(.setPrice("A1", Fixtures.won(1_400)))
        #expect(rig.machine.price(of: "A1", payment: .cash, at: Self.beforeBand)?.price == Fixtures.won(1_400))
        #expect(rig.machine.price(of: "A1", payment: .cashless(.first), at: Self.beforeBand)?.price == Fixtures.won(1_100))
        #expect(rig.machine.price(of: "A1", payment: .cash, at: Self.inBand)?.price == Fixtures.won(1_000))
    }

    /// Cash selected ten seconds before the band: the vend runs into it at the price decided,
    /// and a failed drop gives back what was taken, not the band's price.
    @Test func aBandStartingMidVendKeepsTheCashPriceAndRefundsIt() throws {
        var rig = Rig(setup: Self.setup())
        rig.now = Self.beforeBand
        rig.insert(1_000)
        rig.insert(1_000)
        let started = rig.select("A1")
        #expect(started.events.contains(.vendStarted(try #require(rig.pendingVend), slot: "A1", product: "milk", price: Fixtures.won(1_200))))
        #expect(rig.machine.credit == Fixtures.won(800))
        rig.advance(seconds: 20)
        let vend = try #require(rig.pendingVend)
        let failed = rig.apply(.vendEnded(vend, .notDropped))
        #expect(failed.events.contains(.creditChanged(from: Fixtures.won(800), to: Fixtures.won(2_000))), "refunded at the price paid")
        // The same selection now, in the band.
        rig.select("A1")
        let second = try #require(rig.pendingVend)
        rig.apply(.vendEnded(second, .dropped))
        let sale = try #require(rig.machine.ledger.history.last)
        #expect(sale.price == Fixtures.won(1_000) && sale.priceList == 2)
        #expect(rig.machine.credit == Fixtures.won(1_000))
        #expect(rig.machine.integrityProblems.isEmpty)
        // The books per list (EVA-DTS PA7): one cash sale on list 2, and since no read, the same.
        let line = PriceListSales(slot: "A1", payment: .cash, list: 2)
        #expect(rig.machine.ledger.salesByList.keys.sorted() == [line])
        #expect(rig.machine.ledger.salesByList[line]?.count == 1 && rig.machine.ledger.salesByList[line]?.amount == Fixtures.won(1_000))
        #expect(rig.machine.interimTotals.byList[line]?.count == 1)
        let read = AuditTotals(rig.machine.ledger)
        rig.apply(.auditRead(read))
        #expect(rig.machine.interimTotals.byList[line]?.count == 0, "a read with reset starts the list's interim again")
        #expect(try JSON.roundTrip(read) == read)
    }

    /// A card selected before the band and approved in it: the VEND REQUEST had list 1's card
    /// price, and the sale is booked at it, on list 1.
    @Test func aBandStartingWhileTheCardIsAskedKeepsTheRequestedPrice() throws {
        var rig = Rig(setup: Self.setup())
        rig.now = Self.beforeBand
        rig.apply(.cardReaderReady(.first, CardReaderReadiness(reader: .first, selectionFirst: true)))
        let requested = rig.select("A1")
        let vend = try #require(rig.pendingVend)
        #expect(requested.contains(.requestCardVend(.first, vend, price: Fixtures.won(1_100), slot: "A1")))
        rig.advance(seconds: 30)
        #expect(rig.machine.price(of: "A1", payment: .cashless(.first), at: rig.now)?.price == Fixtures.won(900), "the band is in force")
        rig.apply(.cardVendApproved(vend, amount: nil))
        rig.apply(.vendEnded(vend, .dropped))
        let sale = try #require(rig.machine.ledger.history.last)
        #expect(sale.price == Fixtures.won(1_100) && sale.priceList == 1 && sale.payment == .card(.first))
        #expect(rig.machine.cardSettlements.last?.requested == Fixtures.won(1_100))
    }

    /// A session's price list reaches the VEND REQUEST; the reader's discount reaches the books
    /// through VEND APPROVED, and funds below the list price do not refuse such a card (MDB A3•12).
    @Test func aCardSessionsTermsDecideTheRequestAndTheApprovalTheSale() throws {
        var rig = Rig(setup: Self.setup())
        rig.now = Self.beforeBand
        rig.apply(.cardReaderReady(.first, CardReaderReadiness(reader: .first, selectionFirst: false)))
        rig.apply(.cardSessionBegan(.first, funds: Fixtures.won(5_000), media: .normal, terms: .priceList(userGroup: 2, list: 1)))
        let requested = rig.select("A1")
        let vend = try #require(rig.pendingVend)
        #expect(requested.contains(.requestCardVend(.first, vend, price: Fixtures.won(800), slot: "A1")))
        rig.apply(.cardVendApproved(vend, amount: Fixtures.won(800)))
        rig.apply(.vendEnded(vend, .dropped))
        #expect(rig.machine.ledger.history.last?.priceList == 3)
        rig.apply(.cardSessionEnded(.first))

        rig.apply(.cardSessionBegan(.first, funds: Fixtures.won(1_000), media: .normal, terms: .discount(percent: 10)))
        let discounted = rig.select("A1")
        let second = try #require(rig.pendingVend, "funds of 1,000 do not refuse a 1,100 price the reader discounts")
        #expect(discounted.contains(.requestCardVend(.first, second, price: Fixtures.won(1_100), slot: "A1")))
        rig.apply(.cardVendApproved(second, amount: Fixtures.won(990)))
        rig.apply(.vendEnded(second, .dropped))
        #expect(rig.machine.ledger.history.last?.price == Fixtures.won(990), "the books follow what the reader charged")
        rig.apply(.cardSessionEnded(.first))

        rig.apply(.cardSessionBegan(.first, funds: Fixtures.won(1_000), media: .normal, terms: .standard))
        let refused = rig.select("A1")
        #expect(refused.rejections == [.insufficientFunds("A1", price: Fixtures.won(1_100), funds: Fixtures.won(1_000))])
    }

    @Test func localTimeAndBands() {
        let berlin = TimeZoneRules(
            name: "Europe/Berlin", initialOffset: 3_600,
            transitions: [
                .init(at: 1_774_746_000, offset: 7_200),  // 2026-03-29 01:00Z: summer time
                .init(at: 1_792_890_000, offset: 3_600),  // 2026-10-25 01:00Z: winter time
            ])
        // 2026-03-29 00:59:59Z is 01:59:59 CET; a second later 03:00 CEST.
        #expect(berlin.localTime(at: Instant(millisecondsSinceEpoch: 1_774_745_999_000)) == LocalTime(weekday: .sunday, minuteOfDay: 119))
        #expect(berlin.localTime(at: Instant(millisecondsSinceEpoch: 1_774_746_000_000)) == LocalTime(weekday: .sunday, minuteOfDay: 180))
        #expect(TimeZoneRules.utc.localTime(at: Instant(millisecondsSinceEpoch: -1)) == LocalTime(weekday: .wednesday, minuteOfDay: 1_439))

        let night = TimeBand(list: 2, days: [.saturday], from: 22 * 60, to: 2 * 60)
        #expect(night.contains(LocalTime(weekday: .saturday, minuteOfDay: 23 * 60)))
        #expect(night.contains(LocalTime(weekday: .sunday, minuteOfDay: 60)), "after midnight, the band of the day before")
        #expect(!night.contains(LocalTime(weekday: .sunday, minuteOfDay: 23 * 60)))
        #expect(!night.contains(LocalTime(weekday: .saturday, minuteOfDay: 60)))
        #expect(night.weekMinutes == [(6 * 1_440 + 22 * 60)..<(7 * 1_440), 0..<120], "Saturday night wraps to Sunday morning")
    }

    /// What the machine keeps of prices survives a restart: the vend's list, the session's terms,
    /// the setup's lists and bands; state written before them reads as list 1 and standard prices.
    @Test func pricesSurviveARestart() throws {
        var rig = Rig(setup: Self.setup())
        rig.now = Self.inBand
        rig.apply(.cardReaderReady(.first, CardReaderReadiness(reader: .first, selectionFirst: false)))
        rig.apply(.cardSessionBegan(.first, funds: nil, media: .normal, terms: .surcharge(percent: 5)))
        rig.select("A1")
        let restored = try JSON.roundTrip(rig.machine)
        #expect(restored.setup == rig.machine.setup && restored.pendingVend == rig.machine.pendingVend)
        #expect(restored.pendingVend?.priceList == 2)
        #expect(restored.cardSession?.terms == .surcharge(percent: 5))

        let old = Rig().machine
        let text = try JSON.text(old)
        #expect(!text.contains("priceList") && !text.contains("pricing") && !text.contains("priceLines"), "nothing new written when unused")
        #expect(try JSON.roundTrip(old) == old)
        // A BEGIN SESSION journaled before its terms were read.
        let session = Input.cardSessionBegan(.first, funds: nil, media: .normal)
        #expect(!(try JSON.text(session)).contains("terms"))
        #expect(try JSON.roundTrip(session) == session)
    }
}
