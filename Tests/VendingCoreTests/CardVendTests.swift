import Foundation
import Testing
import VendingCore

/// Card vends in the core: the relay waits for the approval, the settlement stays until the
/// reader acknowledges it, card money never touches credit or the cash books.
@Suite struct CardVendTests {
    static let reader = CardReader.first

    /// A stocked machine with reader #1 ready; `selectionFirst` lets a selection start a card vend.
    static func rig(selectionFirst: Bool = true, unknown: UnknownOutcomePolicy = .refundCredit) -> Rig {
        var rig = Rig(setup: Fixtures.setup(unknownOutcomePolicy: unknown))
        rig.apply(.cardReaderReady(reader, CardReaderReadiness(reader: reader, selectionFirst: selectionFirst)))
        return rig
    }

    static func commands(_ effects: [Effect]) -> [Effect] { effects.filter { if case .event = $0 { false } else { true } } }

    @Test func selectionFirstVendWaitsForApprovalThenSettlesSuccess() {
        var rig = Self.rig()
        let requested = rig.select("A1")
        let vend = try! #require(rig.pendingVend)
        #expect(
            Self.commands(requested) == [
                .requestCardVend(Self.reader, vend, price: Fixtures.won(1_200), slot: "A1"), .setCoinAcceptance(false), .setBillLimit(nil),
            ])
        #expect(rig.machine.available(in: "A1") == 7, "the item is reserved while the approval is awaited")
        #expect(rig.machine.credit.isZero)

        let approved = rig.apply(.cardVendApproved(vend, amount: Fixtures.won(1_100)))
        #expect(Self.commands(approved) == [.energiseRelay("A1", vend)], "the relay moves only on the approval")

        let ended = rig.apply(.vendEnded(vend, .dropped))
        let settlement = CardSettlement(
            vend: vend, reader: Self.reader, slot: "A1", success: true, amount: Fixtures.won(1_100), requested: Fixtures.won(1_200))
        #expect(Self.commands(ended).contains(.settleCardVend(settlement)))
        #expect(rig.machine.cardSettlements == [settlement], "kept until the reader acknowledges")
        #expect(rig.machine.ledger.cardSales[Self.reader]?.amount == Fixtures.won(1_100), "the sale is what the card was charged")
        #expect(rig.machine.ledger.sales.isZero, "card money never enters the cash books")
        #expect(rig.machine.ledger.history.last?.payment == .card(Self.reader))
        #expect(rig.machine.integrityProblems.isEmpty)

        rig.apply(.cardSettlementAnswered(vend, .asAsked))
        #expect(rig.machine.cardSettlements.isEmpty)
        #expect(rig.machine.acceptsCoins)
    }

    @Test func itemNotDroppedIsToldVendFailure() {
        var rig = Self.rig()
        rig.select("A2")
        let vend = try! #require(rig.pendingVend)
        rig.apply(.cardVendApproved(vend, amount: nil))
        rig.apply(.vendEnded(vend, .notDropped))
        #expect(rig.machine.cardSettlements.map(\.success) == [false])
        #expect(rig.machine.cardSettlements.first?.amount == Fixtures.won(1_500), "a token approval charges the price")
        #expect(rig.machine.ledger.cardSales.isEmpty && rig.machine.ledger.failedVends == 1)
        #expect(rig.machine.available(in: "A2") == 10, "the item is still there")

        rig.apply(.cardSettlementAnswered(vend, .refundLost(Fixtures.won(1_500))))
        #expect(
            rig.machine.ledger.cardRefundsLost[Self.reader]?.amount == Fixtures.won(1_500),
            "a refund the reader could not make is booked for the operator")
    }

    /// Journals written before `cardSettlementAnswered` hold `cardVendSettled(refundLost:)`: a
    /// refund lost of the settlement's amount, as it was booked then.
    @Test func aSettlementJournaledByAnOlderVenddIsBookedAsThen() throws {
        var rig = Self.rig()
        rig.select("A2")
        let vend = try #require(rig.pendingVend)
        rig.apply(.cardVendApproved(vend, amount: nil))
        rig.apply(.vendEnded(vend, .notDropped))
        let journaled = Data(#"{"cardVendSettled":{"_0":\#(vend.rawValue),"refundLost":true}}"#.utf8)
        rig.apply(try JSONDecoder().decode(Input.self, from: journaled))
        #expect(rig.machine.ledger.cardRefundsLost[Self.reader]?.amount == Fixtures.won(1_500))
        #expect(rig.machine.cardSettlements.isEmpty)
    }

    /// Old books kept one total of refunds lost (reader #1 was the only one then).
    @Test func booksWithOneRefundsLostTotalDecode() throws {
        var rig = Self.rig()
        rig.select("A2")
        let vend = try #require(rig.pendingVend)
        rig.apply(.cardVendApproved(vend, amount: nil))
        rig.apply(.vendEnded(vend, .notDropped))
        rig.apply(.cardSettlementAnswered(vend, .refundLost(Fixtures.won(1_500))))
        var books = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(rig.machine.ledger)) as? [String: Any])
        books["cardRefundsLost"] = try JSONSerialization.jsonObject(with: JSONEncoder().encode(Fixtures.won(1_500)), options: .fragmentsAllowed)
        let old = try JSONDecoder().decode(Ledger.self, from: JSONSerialization.data(withJSONObject: books))
        #expect(old.cardRefundsLost[.first]?.amount == Fixtures.won(1_500))
    }

    @Test func unknownOutcomeFollowsThePolicy() {
        for (policy, sold) in [(UnknownOutcomePolicy.assumeDispensed, true), (.refundCredit, false)] {
            var rig = Self.rig(unknown: policy)
            rig.select("B1")
            let vend = try! #require(rig.pendingVend)
            rig.apply(.cardVendApproved(vend, amount: nil))
            rig.apply(.vendEnded(vend, .unknown))
            #expect(rig.machine.cardSettlements.map(\.success) == [sold], "\(policy)")
        }
    }

    @Test func deniedVendChargesAndDispensesNothing() {
        var rig = Self.rig()
        rig.select("A1")
        let vend = try! #require(rig.pendingVend)
        let effects = rig.apply(.cardVendDenied(vend))
        #expect(Self.commands(effects).allSatisfy { if case .energiseRelay = $0 { false } else { true } })
        #expect(rig.machine.pendingVend == nil && rig.machine.available(in: "A1") == 8)
        #expect(rig.machine.cardSettlements.isEmpty)
    }

    @Test func aVendNeverApprovedIsToldFailureWhenGivenUp() {
        // vendd restarted (or waited past any reader's limit) before an approval was journaled:
        // the reader may have approved, so it is told VEND FAILURE and refunds if it did.
        var rig = Self.rig()
        rig.select("A1")
        let vend = try! #require(rig.pendingVend)
        rig.advance(seconds: 301)
        let effects = rig.apply(.tick)
        #expect(Self.commands(effects).contains(.cancelCardVend(Self.reader, vend)))
        #expect(
            rig.machine.cardSettlements == [
                CardSettlement(
                    vend: vend, reader: Self.reader, slot: "A1", success: false, amount: .zero(Fixtures.won), requested: Fixtures.won(1_200))
            ])
        // The reader reset meanwhile: it may have approved before (the interface ACKs an approval
        // before vendd can journal it). Booked as possibly charged, never as "nothing charged".
        rig.apply(.cardSettlementAnswered(vend, .unknown(Fixtures.won(1_200))))
        #expect(rig.machine.ledger.cardRefundsLost.isEmpty)
        #expect(rig.machine.ledger.cardPossiblyCharged[Self.reader]?.amount == Fixtures.won(1_200))
        #expect(rig.machine.ledger.cardSales.isEmpty && rig.machine.available(in: "A1") == 8, "nothing sold, nothing dispensed")
    }

    @Test func aVendWhoseReaderResetBeforeAnsweringIsPossiblyCharged() throws {
        var rig = Self.rig()
        rig.select("A1")
        let vend = try #require(rig.pendingVend)
        let effects = rig.apply(.cardVendUnresolved(vend))
        #expect(effects.events.contains(.cardVendUnresolved(vend, reader: Self.reader, slot: "A1", amount: Fixtures.won(1_200))))
        #expect(rig.machine.pendingVend == nil && rig.machine.cardSettlements.isEmpty)
        #expect(rig.machine.ledger.cardPossiblyCharged[Self.reader] != nil)
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func cardFirstSessionPaysWithinItsFunds() {
        var rig = Self.rig(selectionFirst: false)
        rig.apply(.cardSessionBegan(Self.reader, funds: Fixtures.won(1_000), media: .normal))
        #expect(!rig.machine.acceptsCoins, "an open card session takes no cash")
        let refused = rig.select("A1")
        #expect(refused.events.contains(.rejected(.insufficientFunds("A1", price: Fixtures.won(1_200), funds: Fixtures.won(1_000)))))
        let effects = rig.select("B1")
        let vend = try! #require(rig.pendingVend)
        #expect(Self.commands(effects).first == .requestCardVend(Self.reader, vend, price: Fixtures.won(900), slot: "B1"))
    }

    @Test func withoutSessionOrSelectionFirstReaderASelectionNeedsCash() {
        var rig = Self.rig(selectionFirst: false)
        let effects = rig.select("A1")
        #expect(effects.events.contains(.rejected(.insufficientCredit("A1", price: Fixtures.won(1_200), credit: .zero(Fixtures.won)))))
        #expect(rig.pendingVend == nil)
    }

    @Test func cashAndCardNeverMix() {
        var rig = Self.rig()
        rig.insert(500)
        #expect(!rig.machine.acceptsCards, "cash credit disables the readers")
        let effects = rig.apply(.cardSessionBegan(Self.reader, funds: nil, media: .normal))
        #expect(Self.commands(effects) == [.endCardSession(Self.reader)], "a card presented anyway is sent away")
        #expect(rig.machine.cardSession == nil)
        let select = rig.select("A1")
        #expect(select.events.contains(.rejected(.insufficientCredit("A1", price: Fixtures.won(1_200), credit: Fixtures.won(500)))))
    }

    @Test func cashSalesAreReportedToReaders() {
        var rig = Self.rig()
        rig.insert(1_000)
        rig.insert(500)
        rig.select("A2")
        let effects = rig.apply(.vendEnded(try! #require(rig.pendingVend), .dropped))
        #expect(Self.commands(effects).contains(.reportCashSale(price: Fixtures.won(1_500), slot: "A2")))
        #expect(rig.machine.ledger.sales == Fixtures.won(1_500) && rig.machine.ledger.cardSales.isEmpty)
    }

    @Test func freeVendCardsAreNoSale() {
        var rig = Self.rig()
        rig.apply(.cardSessionBegan(Self.reader, funds: nil, media: .freeVend))
        rig.select("A1")
        let vend = try! #require(rig.pendingVend)
        rig.apply(.cardVendApproved(vend, amount: .zero(Fixtures.won)))
        rig.apply(.vendEnded(vend, .dropped))
        #expect(rig.machine.ledger.freeCardVends == 1 && rig.machine.ledger.cardSales.isEmpty && rig.machine.salesTotals().total.count == 0)
        #expect(rig.machine.available(in: "A1") == 7)
    }

    @Test func coinReturnCancelsAnAwaitedApprovalOrEndsTheSession() {
        var rig = Self.rig()
        rig.select("A1")
        let vend = try! #require(rig.pendingVend)
        #expect(Self.commands(rig.apply(.coinReturnPressed)) == [.cancelCardVend(Self.reader, vend)])
        rig.apply(.cardVendDenied(vend))
        rig.apply(.cardSessionBegan(Self.reader, funds: nil, media: .normal))
        #expect(Self.commands(rig.apply(.coinReturnPressed)) == [.endCardSession(Self.reader)])
    }

    @Test func settlementsSurviveEncodingAndOldSalesDecodeAsCash() throws {
        var rig = Self.rig()
        rig.select("A1")
        let vend = try #require(rig.pendingVend)
        rig.apply(.cardVendApproved(vend, amount: nil))
        rig.apply(.vendEnded(vend, .dropped))
        let data = try JSONEncoder().encode(rig.machine)
        let restored = try JSONDecoder().decode(Machine.self, from: data)
        #expect(restored.cardSettlements == rig.machine.cardSettlements)
        #expect(restored.cardReaders.isEmpty, "readiness is not saved: a restarted reader reports again")
        let old = #"{"vend":1,"slot":"A1","product":"milk","price":"100 KRW","at":1,"confirmation":"assumed"}"#
        #expect(try JSONDecoder().decode(Sale.self, from: Data(old.utf8)).payment == .cash)
    }
}
