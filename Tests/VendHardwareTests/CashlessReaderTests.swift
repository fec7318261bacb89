import Foundation
import MDB
import MDBSocketSimulator
import SimulatedMDB
import Testing
import VendingCore

@testable import VendDrivers

/// The cashless reader driver against readers written from MDB §7, with the machine core in
/// the loop: every test ends by comparing the machine's books with the readers' own.
@Suite struct CashlessReaderTests {
    /// The reader's books (charged − refunded) equal the machine's card money, and each card
    /// sale took an item.
    static func expectBooksAgree(_ rig: CardRig, sales: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            rig.booksCardMoney == rig.readersNetCharged, "books \(rig.booksCardMoney) vs readers \(rig.readersNetCharged)",
            sourceLocation: sourceLocation)
        #expect(rig.machine.ledger.cardSales.values.reduce(0) { $0 + $1.count } == sales, sourceLocation: sourceLocation)
        #expect(rig.machine.cardSettlements.isEmpty, "every settlement acknowledged", sourceLocation: sourceLocation)
        #expect(rig.machine.integrityProblems.isEmpty, sourceLocation: sourceLocation)
    }

    @Test(arguments: [UInt8(1), 2, 3])
    func initialisesAtEachLevel(level: UInt8) throws {
        let reader = SimulatedCashlessReader(level: level)
        let rig = CardRig(readers: [reader])
        try rig.start()
        #expect(reader.state == .enabled, "READER ENABLE after the sequence: the machine can sell")
        #expect(rig.machine.cardReaders[.first]?.selectionFirst == (level == 3), "always idle is offered at level 3 only")
        #expect(rig.log.notices.contains { $0.contains("level \(level)") }, "\(rig.log.notices) \(rig.transport.bus.transactions.prefix(12))")
    }

    @Test func selectionFirstVend() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        try rig.start()
        rig.select("A1")
        try rig.run(for: .seconds(1))
        #expect(rig.pulses == ["A1"])
        #expect(reader.charged == [120], "1,200 won at 10 won per unit")
        #expect(reader.state == .enabled)
        Self.expectBooksAgree(rig, sales: 1)
        #expect(rig.machine.ledger.sales.isZero, "no cash")
    }

    @Test(arguments: [UInt8(1), 2, 3])
    func cardFirstVendEndsItsSession(level: UInt8) throws {
        let reader = SimulatedCashlessReader(level: level)
        let rig = CardRig(readers: [reader], selectionFirst: false)
        try rig.start()
        reader.presentCard(funds: 500)
        try rig.run(for: .milliseconds(500))
        #expect(rig.machine.cardSession?.funds == MDBRig.won(5_000))
        rig.select("A2")
        try rig.run(for: .seconds(1))
        #expect(rig.pulses == ["A2"])
        #expect(reader.state == .enabled, "one vend per session: SESSION COMPLETE, END SESSION")
        #expect(rig.machine.cardSession == nil)
        Self.expectBooksAgree(rig, sales: 1)
    }

    /// A reader that allows several vends per session (option b1) keeps the card's session open
    /// after each vend; the session ends when the customer stays idle for the session time-out
    /// (SESSION COMPLETE, then the reader's END SESSION), or at coin return.
    @Test(arguments: [false, true])
    func multiVendSessionSellsTwiceThenEnds(byCoinReturn: Bool) throws {
        let reader = SimulatedCashlessReader(options: [.canRefund, .cashSale, .multiVend], features: [])
        let rig = CardRig(readers: [reader], selectionFirst: false)
        try rig.start()
        reader.presentCard(funds: 500)
        try rig.run(for: .milliseconds(500))
        rig.select("A1")
        try rig.run(for: .seconds(1))
        #expect(rig.machine.cardSession != nil && reader.state == .sessionIdle, "multi-vend: the session stays open after a vend")
        rig.select("A2")
        try rig.run(for: .seconds(1))
        #expect(rig.pulses == ["A1", "A2"])
        #expect(reader.charged == [120, 150])
        if byCoinReturn {
            rig.apply(.coinReturnPressed)
            try rig.run(for: .seconds(1))
        } else {
            try rig.run(for: .seconds(9))
            #expect(rig.machine.cardSession != nil, "not idle for the whole time-out yet")
            try rig.run(for: .seconds(2))
        }
        #expect(rig.machine.cardSession == nil && reader.state == .enabled, "the session ended: SESSION COMPLETE, END SESSION")
        Self.expectBooksAgree(rig, sales: 2)
    }

    /// Found by the HIL card scenario: the machine enables the readers (its service mode ends,
    /// a slot is restocked, the cash credit is paid out) and a customer selects before the bus
    /// thread's next turn. The VEND REQUEST must find the reader enabled, not be denied because
    /// READER ENABLE had not gone out yet.
    @Test func selectionRightAfterTheReadersAreEnabledIsTaken() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        try rig.start()
        rig.apply(.setServiceMode(true))
        try rig.run(for: .milliseconds(500))
        #expect(reader.state == .disabled, "READER DISABLE in service mode")
        rig.apply(.setServiceMode(false))
        rig.select("A1")
        try rig.run(for: .seconds(1))
        #expect(rig.pulses == ["A1"], "\(rig.log.notices)")
        #expect(reader.charged == [120])
        Self.expectBooksAgree(rig, sales: 1)
    }

    /// BEGIN SESSION's payment type and data (MDB 4.2 p.7•15) against A1's lists: 1,200 won on
    /// list 1, 1,000 on list 2, 800 on list 3 for cashless #1; the card's list 1 is the machine's
    /// list 3, its list 2 list 2 (EVA §5.1.7). The VEND REQUEST carries the list's price; a
    /// percentage is the reader's to apply, and the books follow its VEND APPROVED.
    @Test(arguments: [
        // (type, data, VEND REQUEST, charged), scaled at 10 won.
        (UInt8(0), UInt16(0), UInt32(120), UInt32(120)),
        (1, 0x0401, 80, 80),
        (1, 0x0409, 120, 120),
        (2, 0x0002, 100, 100),
        (3, 0x000A, 120, 108),
        (4, 0x0005, 120, 126),
        (5, 0x0001, 120, 120),
        (0x41, 0x0001, 80, 80),
    ])
    func beginSessionPaymentTypeDecidesTheVendRequest(type: UInt8, data: UInt16, request: UInt32, charge: UInt32) throws {
        let reader = SimulatedCashlessReader(level: 2)
        let rig = CardRig(
            readers: [reader], selectionFirst: false,
            priceLines: [
                PriceLine(list: 2, scope: .any, price: MDBRig.won(1_000)), PriceLine(list: 3, scope: .cashless1, price: MDBRig.won(800)),
            ],
            pricing: PricingSetup(lists: [2: "two", 3: "three"], cardLists: [.first: [1: 3, 2: 2]]))
        try rig.start()
        reader.presentCard(funds: 500, paymentType: type, paymentData: data)
        try rig.run(for: .milliseconds(500))
        rig.select("A1")
        try rig.run(for: .seconds(1))
        #expect(reader.requested == [request])
        #expect(reader.charged == [charge])
        #expect(rig.pulses == ["A1"])
        if type & 0x40 == 0 {
            #expect(rig.machine.ledger.history.last?.price == MDBRig.won(Int64(charge) * 10))
            Self.expectBooksAgree(rig, sales: 1)
        } else {
            #expect(rig.machine.ledger.history.last?.payment == .freeCard(.first), "test media: no sale")
        }
    }

    @Test func deniedVendDispensesNothing() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        try rig.start()
        reader.faults.deny = true
        rig.select("A1")
        try rig.run(for: .seconds(1))
        #expect(rig.pulses.isEmpty && reader.charged.isEmpty && rig.machine.pendingVend == nil)
        Self.expectBooksAgree(rig, sales: 0)
    }

    @Test func itemNotDroppedIsRefunded() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        rig.dispense = { _ in .notDropped }
        try rig.start()
        rig.select("A1")
        try rig.run(for: .seconds(1))
        #expect(reader.refunded == [120])
        Self.expectBooksAgree(rig, sales: 0)
    }

    @Test func aFailedRefundIsBookedForTheOperator() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        rig.dispense = { _ in .notDropped }
        try rig.start()
        reader.faults.refundFails = true
        rig.select("A1")
        try rig.run(for: .seconds(1))
        #expect(reader.refunded.isEmpty)
        #expect(rig.machine.ledger.cardRefundsLost[.first]?.amount == MDBRig.won(1_200))
        Self.expectBooksAgree(rig, sales: 0)
    }

    /// The interface is lost once VEND SUCCESS or VEND FAILURE has reached the reader, before
    /// its answer (the randomized runs, seeds 112 and 247): the settlement was taken off the
    /// list before it went out and never answered, the machine waiting for it for ever. A sale
    /// stands; a refund whose result went with the link is possibly charged.
    @Test(arguments: [VendOutcome.dropped, .notDropped])
    func aLinkLostBeforeTheAnswerToTheSettlementStillSettlesIt(outcome: VendOutcome) throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        rig.dispense = { _ in outcome }
        try rig.start()
        rig.transport.unplugAfterDelivering = LoopbackTransport.isVendSettlement
        rig.select("A1")
        try rig.run(for: .seconds(3))
        #expect(rig.transport.unplugAfterDelivering == nil, "the link was lost")
        #expect(reader.charged == [120] && reader.refunded == (outcome == .dropped ? [] : [120]))
        #expect(rig.machine.cardSettlements.isEmpty, "answered: \(rig.log.notices)")
        #expect(rig.booksPossiblyCharged == (outcome == .dropped ? 0 : 1_200))
        #expect(rig.readersWithinBooks, "books \(rig.booksCardMoney) ≤ reader \(rig.readersNetCharged) ≤ books + \(rig.booksPossiblyCharged)")
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    /// VEND FAILURE is lost on the bus three times (its answer or the command itself), and the
    /// reader answers the POLLs after: their ACK, taken for the refund made, booked nothing
    /// charged while the reader still held the approval. Now the refund is possibly charged.
    @Test func anUnansweredVendFailureIsPossiblyCharged() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        rig.dispense = { _ in
            reader.faults.vendFailureUnheard = true
            return .notDropped
        }
        try rig.start()
        rig.select("A1")
        try rig.run(for: .seconds(3))
        #expect(reader.charged == [120] && reader.refunded.isEmpty, "never told: a sale to the reader at its reset")
        #expect(rig.machine.cardSettlements.isEmpty, "answered: \(rig.log.notices)")
        #expect(rig.booksPossiblyCharged == 1_200)
        #expect(rig.readersWithinBooks, "books \(rig.booksCardMoney) ≤ reader \(rig.readersNetCharged) ≤ books + \(rig.booksPossiblyCharged)")
    }

    /// Killed between approval and settlement; at the restart VEND FAILURE goes unanswered: the
    /// interface is lost once it has reached the reader, which refunds, or it is lost on the bus
    /// three times. The first was then taken for a settlement never told, a sale to the reader at
    /// the bus reset (refund lost: the books held a charge the reader had refunded); the second
    /// was sent again at every retry, never answered. Now either is possibly charged.
    @Test(arguments: [true, false])
    func aVendFailureUnansweredAtTheRestartIsPossiblyCharged(linkLost: Bool) throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader], unknown: .refundCredit)
        try rig.start()
        rig.select("A1")
        while rig.pulses.isEmpty { try rig.run(for: .milliseconds(10)) }
        if linkLost {
            rig.transport.unplugAfterDelivering = LoopbackTransport.isVendSettlement
        } else {
            reader.faults.vendFailureUnheard = true
        }
        try rig.restart()
        try rig.run(for: .seconds(3))
        #expect(rig.transport.unplugAfterDelivering == nil)
        #expect(reader.charged == [120] && reader.refunded == (linkLost ? [120] : []))
        #expect(rig.machine.cardSettlements.isEmpty, "answered: \(rig.log.notices)")
        #expect(rig.booksPossiblyCharged == 1_200)
        #expect(rig.readersWithinBooks, "books \(rig.booksCardMoney) ≤ reader \(rig.readersNetCharged) ≤ books + \(rig.booksPossiblyCharged)")
        #expect(rig.machine.integrityProblems.isEmpty)
    }

    @Test func slowApprovalWithinTheReadersLimitIsWaitedFor() throws {
        let reader = SimulatedCashlessReader(maximumResponseTime: 30)
        let rig = CardRig(readers: [reader])
        try rig.start()
        reader.faults.approvalPolls = 280  // 28 s of 100 ms polls: an online authorisation
        rig.select("A1")
        try rig.run(for: .seconds(30))
        #expect(rig.pulses == ["A1"])
        Self.expectBooksAgree(rig, sales: 1)
    }

    @Test func approvalPastTheReadersLimitIsCancelled() throws {
        let reader = SimulatedCashlessReader(maximumResponseTime: 10)
        let rig = CardRig(readers: [reader])
        try rig.start()
        reader.faults.approvalPolls = 10_000
        rig.select("A1")
        try rig.run(for: .seconds(15))
        #expect(rig.pulses.isEmpty && rig.machine.pendingVend == nil)
        #expect(rig.log.notices.contains { $0.contains("VEND CANCEL") })
        Self.expectBooksAgree(rig, sales: 0)
    }

    @Test func approvalCrossingTheCustomersCancelVendsOnce() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        try rig.start()
        reader.faults.approvalPolls = 50
        reader.faults.approveOnCancel = true
        rig.select("A1")
        try rig.run(for: .milliseconds(300))
        rig.apply(.coinReturnPressed)
        try rig.run(for: .seconds(1))
        #expect(rig.pulses == ["A1"], "the approval won the race: the item comes out, charged once")
        Self.expectBooksAgree(rig, sales: 1)
    }

    @Test func readerResetBetweenApprovalAndSuccessIsASale() throws {
        for outcome in [VendOutcome.dropped, .notDropped] {
            let reader = SimulatedCashlessReader()
            let rig = CardRig(readers: [reader])
            rig.dispense = { _ in
                reader.resetItself()
                return outcome
            }
            try rig.start()
            rig.select("A1")
            try rig.run(for: .seconds(2))
            #expect(reader.charged == [120] && reader.refunded.isEmpty, "the reset made it a sale to the reader")
            #expect(rig.machine.ledger.cardRefundsLost[.first]?.amount == (outcome == .dropped ? nil : MDBRig.won(1_200)), "\(outcome)")
            #expect(reader.state == .enabled, "initialised again")
            Self.expectBooksAgree(rig, sales: outcome == .dropped ? 1 : 0)
        }
    }

    @Test func killedBetweenApprovalAndSuccessTellsTheReaderBeforeAnyReset() throws {
        for policy in [UnknownOutcomePolicy.assumeDispensed, .refundCredit] {
            let reader = SimulatedCashlessReader()
            let rig = CardRig(readers: [reader], unknown: policy)
            try rig.start()
            rig.select("A1")
            while rig.pulses.isEmpty { try rig.run(for: .milliseconds(10)) }
            let resets = rig.transport.busResets
            try rig.restart()
            #expect(rig.transport.busResets == resets, "no bus reset while the reader holds an approval")
            #expect(reader.charged == [120])
            #expect(reader.refunded == (policy == .refundCredit ? [120] : []), "\(policy)")
            #expect(reader.state == .enabled)
            Self.expectBooksAgree(rig, sales: policy == .assumeDispensed ? 1 : 0)
        }
    }

    @Test func powerCutBetweenApprovalAndSuccessIsSettledAsTheReaderSawIt() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader], unknown: .refundCredit)
        try rig.start()
        rig.select("A1")
        while rig.pulses.isEmpty { try rig.run(for: .milliseconds(10)) }
        reader.resetItself()  // it lost power too: the approval is a sale to it
        try rig.restart()
        #expect(reader.charged == [120] && reader.refunded.isEmpty)
        #expect(rig.machine.ledger.cardRefundsLost[.first]?.amount == MDBRig.won(1_200), "charged for an item nobody saw drop: the operator refunds")
        Self.expectBooksAgree(rig, sales: 0)
    }

    @Test func killedWhileAwaitingApprovalRefundsAnApprovalNeverJournaled() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        try rig.start()
        reader.faults.approvalPolls = 3
        rig.select("A1")
        // The reader approves, but vendd dies before the approval is journaled.
        try rig.master.service(force: true)
        try rig.master.service(force: true)
        try rig.master.service(force: true)
        try rig.master.service(force: true)
        try rig.restart()
        #expect(rig.pulses.isEmpty)
        #expect(reader.charged.count == reader.refunded.count, "whatever was approved was refunded")
        Self.expectBooksAgree(rig, sales: 0)
    }

    @Test func outOfSequenceResetsAndInitialisesAgain() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        try rig.start()
        _ = reader.respond(to: CashlessCommand.vendSuccess(item: 1).block(for: .cashless1))  // a command it did not expect
        try rig.run(for: .seconds(1))
        #expect(rig.log.faults.contains { $0.contains("COMMAND OUT OF SEQUENCE (reader state 3") })
        #expect(rig.transport.bus.count(0x10) == 1, "RESET sent")
        #expect(reader.state == .enabled)
        rig.select("A1")
        try rig.run(for: .seconds(1))
        Self.expectBooksAgree(rig, sales: 1)
    }

    @Test func endSessionLostResetsTheReader() throws {
        let reader = SimulatedCashlessReader(maximumResponseTime: 5)
        let rig = CardRig(readers: [reader], selectionFirst: false)
        try rig.start()
        reader.faults.loseEndSession = true
        reader.presentCard(funds: nil)
        try rig.run(for: .milliseconds(300))
        rig.select("A1")
        try rig.run(for: .seconds(7))
        #expect(rig.log.faults.contains { $0.contains("no END SESSION") })
        #expect(rig.machine.cardSession == nil && reader.state == .enabled)
        Self.expectBooksAgree(rig, sales: 1)
    }

    @Test func twoReadersOneSessionAtATime() throws {
        let first = SimulatedCashlessReader(address: .cashless1)
        let second = SimulatedCashlessReader(address: .cashless2, level: 2)
        let rig = CardRig(readers: [first, second], selectionFirst: false)
        try rig.start()
        first.presentCard(funds: nil)
        try rig.run(for: .milliseconds(300))
        second.presentCard(funds: nil)
        try rig.run(for: .milliseconds(300))
        #expect(rig.machine.cardSession?.reader == .first)
        #expect(rig.rejections.contains(.cardSessionRefused(.second)))
        #expect(second.state == .enabled, "its session was ended")
        rig.select("A1")
        try rig.run(for: .seconds(1))
        second.presentCard(funds: nil)
        try rig.run(for: .milliseconds(300))
        rig.select("A2")
        try rig.run(for: .seconds(1))
        #expect(first.charged == [120] && second.charged == [150])
        #expect(rig.machine.ledger.cardSales[.second]?.amount == MDBRig.won(1_500))
        Self.expectBooksAgree(rig, sales: 2)
    }

    // MARK: - Card money as the reader keeps it (issue [card-truth])

    /// The reader approves, the interface ACKs the approval by itself, and the power goes before
    /// vendd journals it; the reader resets with the cut and counts the vend a sale (§7.4).
    /// vendd cannot know: the price is booked possibly charged, never "nothing charged".
    @Test func powerCutInTheApprovalWindowIsBookedPossiblyCharged() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        try rig.start()
        reader.faults.approvalPolls = 3
        rig.select("A1")
        for _ in 0..<4 { try rig.master.service(force: true) }  // the approval is read, never journaled
        #expect(reader.charged == [120])
        reader.resetItself()
        try rig.restart()
        try rig.run(for: .seconds(2))
        #expect(rig.pulses.isEmpty, "nothing dispensed")
        #expect(rig.booksPossiblyCharged == 1_200, "possibly charged: \(rig.log.notices)")
        #expect(rig.readersWithinBooks, "books \(rig.booksCardMoney) ≤ reader \(rig.readersNetCharged) ≤ books + \(rig.booksPossiblyCharged)")
        #expect(rig.machine.cardSettlements.isEmpty && rig.machine.integrityProblems.isEmpty)
    }

    /// Killed while the approval was awaited; at restart the reader's refund of the approval
    /// fails (MALFUNCTION C0): the refund lost is booked, at the price requested, as on the running path.
    @Test(arguments: [false, true])
    func aRefundThatFailsAfterARestartIsBooked(approvalCollectedAtStart: Bool) throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        try rig.start()
        reader.faults.approvalPolls = approvalCollectedAtStart ? 50 : 3
        rig.select("A1")
        for _ in 0..<4 { try rig.master.service(force: true) }
        // Still asked (the approval comes as vendd cancels it at start), or approved unseen.
        reader.faults.approveOnCancel = approvalCollectedAtStart
        reader.faults.refundFails = true
        try rig.restart()
        try rig.run(for: .seconds(2))
        #expect(reader.charged == [120] && reader.refunded.isEmpty)
        #expect(rig.machine.ledger.cardRefundsLost[.first]?.amount == MDBRig.won(1_200), "\(rig.log.notices)")
        #expect(rig.log.faults.contains { $0.contains("refund failed") })
        Self.expectBooksAgree(rig, sales: 0)
    }

    /// Found by the randomized runs (seed 88): a level-1 reader still asked at the restart answers
    /// VEND FAILURE with a one-byte COMMAND OUT OF SEQUENCE and approves in the same reply. Read
    /// as level 3 (the level is unknown before its SETUP) that reply was unreadable, skipped, and
    /// the next ACK taken for a refund: the card stayed charged, booked as refunded.
    @Test func aLevelOneReplyAtTheRestartIsReadWhole() throws {
        let reader = SimulatedCashlessReader(level: 1)
        let rig = CardRig(readers: [reader], selectionFirst: false)
        try rig.start()
        reader.presentCard(funds: nil)
        try rig.run(for: .milliseconds(300))
        reader.faults.approvalPolls = 2
        rig.select("A1")
        try rig.master.service(force: true)  // VEND REQUEST and a POLL; vendd dies
        try rig.restart()
        try rig.run(for: .seconds(2))
        #expect(reader.charged == [120] && reader.refunded == [120], "approved in the reply, refused, refunded: \(rig.log.notices)")
        Self.expectBooksAgree(rig, sales: 0)
    }

    /// A reader in another currency than mdb.currency_code is refused like a changer or
    /// validator would be: never enabled, never asked for a vend.
    @Test func aReaderInAnotherCurrencyIsRefused() throws {
        let reader = SimulatedCashlessReader()
        reader.config = ReaderConfig(
            level: 3, currency: MDBCurrencyCode(raw: 0x1978), scaleFactor: 1, decimalPlaces: 2, maximumResponseTime: 30,
            options: [.canRefund])
        let rig = CardRig(readers: [reader], currencyNumeric: 410)
        try rig.start()
        #expect(rig.machine.cardReaders.isEmpty, "not ready")
        #expect(reader.state == .disabled)
        #expect(rig.log.faults.contains { $0.contains("ISO 4217 978") && $0.contains("mdb.currency_code says ISO 4217 410") })
        rig.select("A1")
        try rig.run(for: .seconds(2))
        #expect(reader.charged.isEmpty && rig.pulses.isEmpty)
        #expect(rig.mailboxes[0].status.hasPrefix("refused"))
    }

    /// VEND APPROVED and COMMAND OUT OF SEQUENCE in one reply (§7.3.1): served in order; the
    /// approval is settled (here VEND FAILURE: nothing dropped, so refunded) before the RESET.
    @Test(arguments: [VendOutcome.dropped, .notDropped])
    func outOfSequenceBesideAnApprovalSettlesItFirst(outcome: VendOutcome) throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        rig.dispense = { _ in outcome }
        try rig.start()
        reader.faults.outOfSequenceAfterApproval = true
        rig.select("A1")
        try rig.run(for: .seconds(3))
        #expect(rig.pulses == ["A1"], "the approval was honoured")
        #expect(reader.charged == [120])
        #expect(reader.refunded == (outcome == .dropped ? [] : [120]), "told before the reset: \(rig.log.notices)")
        #expect(rig.machine.ledger.cardRefundsLost.isEmpty)
        #expect(rig.transport.bus.count(0x10) == 1, "then RESET, as out of sequence requires")
        #expect(reader.state == .enabled, "initialised again")
        Self.expectBooksAgree(rig, sales: outcome == .dropped ? 1 : 0)
    }

    /// A selection-first vend ends in the reader's Session Idle; the machine closes it with
    /// SESSION COMPLETE (§7.4.4, examples #11, #13), so the next customer may tap or select.
    @Test func aSelectionFirstVendClosesItsSession() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader])
        try rig.start()
        rig.select("A1")
        try rig.run(for: .seconds(1))
        #expect(reader.state == .enabled, "SESSION COMPLETE, END SESSION")
        reader.faults.deny = true
        rig.select("A2")
        try rig.run(for: .seconds(1))
        #expect(reader.state == .enabled, "a denial's session is closed too")
        reader.presentCard(funds: nil)
        try rig.run(for: .milliseconds(300))
        #expect(rig.machine.cardSession != nil, "a card tapped after a selection-first sale is taken")
        rig.select("A2")
        try rig.run(for: .seconds(1))
        #expect(rig.transport.bus.count(0x10) == 0, "no RESET: nothing went out of sequence")
        Self.expectBooksAgree(rig, sales: 2)
    }

    /// SESSION CANCEL REQUEST is answered with SESSION COMPLETE (§7.4.4).
    @Test func aSessionCancelRequestIsAnswered() throws {
        let reader = SimulatedCashlessReader()
        let rig = CardRig(readers: [reader], selectionFirst: false)
        try rig.start()
        reader.presentCard(funds: nil)
        try rig.run(for: .milliseconds(300))
        reader.removeCard()
        try rig.run(for: .milliseconds(300))
        #expect(reader.state == .enabled && rig.machine.cardSession == nil)
    }

    /// Randomized customers and faults, at the edges of timing: the readers' own counts always
    /// lie within the books (books ≤ readers ≤ books + possibly charged). Some customers meet a
    /// multi-message reply (APPROVED + OUT OF SEQUENCE); some are cut in the approval window:
    /// the reader approves, the interface ACKs it, vendd dies before journaling it, and the
    /// reader sometimes resets at the same instant. Some lose the interface once a command or
    /// POLL has reached the reader, before its answer (`answerLost`), for a while or through a
    /// restart. VENDD_CASHLESS_RUNS sets how many seeds.
    @Test func randomizedRunsKeepTheBooksEqualToTheReaders() throws {
        let environment = ProcessInfo.processInfo.environment
        let runs = environment["VENDD_CASHLESS_RUNS"].flatMap(UInt64.init) ?? 60
        let first = environment["VENDD_CASHLESS_SEED"].flatMap(UInt64.init) ?? 0
        for seed in first..<(first + runs) { try Self.randomizedRun(seed: seed) }
    }

    /// Seeds that once failed, kept: a card with a discount or surcharge cut in the approval
    /// window, whose reader charged other than the price the books then took for it (71,128,…);
    /// the interface lost once VEND SUCCESS or FAILURE had reached the reader (112, 247).
    @Test(arguments: [71_128_141, 71_128_166, 71_128_189, 71_128_190, 71_128_221, 112, 247] as [UInt64])
    func seedsThatFoundABug(seed: UInt64) throws {
        try Self.randomizedRun(seed: seed)
    }

    static func randomizedRun(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let reader = SimulatedCashlessReader(
            level: UInt8(Int.random(in: 1...3, using: &random)), maximumResponseTime: UInt8(Int.random(in: 5...15, using: &random)))
        let rig = CardRig(
            readers: [reader], selectionFirst: Int.random(in: 0...1, using: &random) == 1,
            unknown: Int.random(in: 0...1, using: &random) == 1 ? .assumeDispensed : .refundCredit,
            priceLines: [
                PriceLine(list: 2, scope: .cashless, price: MDBRig.won(1_000)), PriceLine(list: 3, scope: .any, price: MDBRig.won(700)),
            ],
            pricing: PricingSetup(lists: [2: "two", 3: "three"], cardLists: [.first: [1: 2, 2: 3]]))
        var dropped = true
        rig.dispense = { _ in dropped ? .dropped : .notDropped }
        // Apart, so that the customers and the reader's faults of a seed are as they were.
        var linkFaults = SeededGenerator(seed: ~seed)
        try rig.start()
        for _ in 0..<6 {
            rig.transport.unplugAfterDelivering = nil
            reader.faults.approvalPolls = Int.random(in: 0...120, using: &random)
            reader.faults.deny = Int.random(in: 0...5, using: &random) == 0
            reader.faults.refundFails = Int.random(in: 0...5, using: &random) == 0
            reader.faults.outOfSequenceAfterApproval = Int.random(in: 0...5, using: &random) == 0
            dropped = Int.random(in: 0...3, using: &random) != 0
            if reader.config.level < 3 || !rig.machine.cardReaders.values.contains(where: \.selectionFirst) {
                // Each payment type of BEGIN SESSION (MDB 4.2 p.7•15), and one vendd does not know (5).
                let type = UInt8(Int.random(in: 0...5, using: &random))
                let data = UInt16(Int.random(in: 0...3, using: &random) << 8 | Int.random(in: 0...30, using: &random))
                reader.presentCard(
                    funds: Int.random(in: 0...1, using: &random) == 0 ? nil : UInt32(Int.random(in: 100...400, using: &random)),
                    paymentType: type, paymentData: data)
                try rig.run(for: .milliseconds(200))
            }
            rig.select(Int.random(in: 0...1, using: &random) == 0 ? "A1" : "A2")
            if Int.random(in: 0...3, using: &random) == 0 {
                // The approval window: the bus runs on, its reports never reach the journal.
                reader.faults.approvalPolls = Int.random(in: 0...3, using: &random)
                for _ in 0..<Int.random(in: 1...6, using: &random) { try rig.master.service(force: true) }
                if Int.random(in: 0...1, using: &random) == 0 { reader.resetItself() }
                try rig.restart()
                try rig.run(for: .seconds(20))
                continue
            }
            if Int.random(in: 0...2, using: &linkFaults) == 0 {
                rig.transport.unplugAfterDelivering = Self.answerLost(&linkFaults)
                rig.outage = .milliseconds(Int64(Int.random(in: 0...8_000, using: &linkFaults)))
            }
            try rig.run(for: .milliseconds(Int64(Int.random(in: 0...4_000, using: &random))))
            switch Int.random(in: 0...5, using: &random) {
            case 0: reader.resetItself()
            case 1: try rig.restart()
            case 2:
                reader.resetItself()
                try rig.restart()
            default: break
            }
            try rig.run(for: .seconds(20))
        }
        try rig.run(for: .seconds(40))
        #expect(
            rig.readersWithinBooks,
            "seed \(seed): books \(rig.booksCardMoney) (+ possibly \(rig.booksPossiblyCharged)) vs readers \(rig.readersNetCharged) (charged \(reader.charged), refunded \(reader.refunded)); \(rig.log.notices.joined(separator: "\n"))\n\(rig.trace.joined(separator: "\n"))"
        )
        #expect(rig.machine.cardSettlements.isEmpty && rig.machine.pendingVend == nil, "seed \(seed)")
        #expect(rig.machine.integrityProblems.isEmpty, "seed \(seed)")
        let sold = rig.machine.ledger.cardSales.values.reduce(0) { $0 + $1.count }
        #expect(sold <= rig.pulses.count, "seed \(seed): no sale without a relay pulse")
    }

    /// Which block to a reader the interface is lost after (delivered, its answer gone): the
    /// first to fourth VEND REQUEST, VEND CANCEL, VEND SUCCESS, VEND FAILURE, SESSION COMPLETE
    /// or POLL (a POLL's data, an approval or a refund's result, is lost with it).
    static func answerLost(_ random: inout SeededGenerator) -> (MDBBlock) -> Bool {
        let vendSubcommand = ([nil, 0x00, 0x01, 0x02, 0x03, 0x04] as [UInt8?]).randomElement(using: &random)!
        var earlierMatches = Int.random(in: 0...3, using: &random)
        return { block in
            let matches = vendSubcommand.map { block.command == 3 && block.data.first == $0 } ?? (block.command == 2)
            guard matches else { return false }
            earlierMatches -= 1
            return earlierMatches < 0
        }
    }
}
