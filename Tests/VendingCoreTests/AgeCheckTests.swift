import Testing

@testable import VendingCore

/// Age-restricted selections: a check before any money or item moves, approved by the verifier
/// within its timeout, ended by a timeout, coin return or restart with the credit untouched.
struct AgeCheckTests {
    /// A1 (milk) unrestricted, A2 (cola) 19+, B1 (coffee) 20+.
    static func setup(verifier: Bool = true) -> MachineSetup {
        try! MachineSetup(
            currency: Fixtures.won, catalog: Catalog([Fixtures.milk, Fixtures.cola, Fixtures.coffee]),
            slots: [
                SlotSetup(id: "A1", product: "milk", price: Fixtures.won(1_200), capacity: 8),
                SlotSetup(id: "A2", product: "cola", price: Fixtures.won(1_500), capacity: 10, minimumAge: 19),
                SlotSetup(id: "B1", product: "coffee", price: Fixtures.won(900), capacity: 6, minimumAge: 20),
            ],
            maximumCredit: Fixtures.won(10_000), payoutPolicy: .manual,
            ageVerification: verifier ? AgeVerificationSetup(timeout: .seconds(60)) : nil)
    }

    static func ended(_ effects: [Effect]) -> AgeCheckEnd? {
        effects.events.compactMap { if case .ageCheckEnded(_, let reason) = $0 { reason } else { nil } }.first
    }

    static func vendStarted(_ effects: [Effect]) -> Bool {
        effects.events.contains { if case .vendStarted = $0 { true } else { false } }
    }

    @Test func refusedWithoutAVerifier() {
        var rig = Rig(setup: Self.setup(verifier: false))
        rig.insert(2_000)
        let effects = rig.select("A2")
        #expect(effects.rejections == [.noAgeVerifier("A2", age: 19)])
        #expect(rig.machine.credit == Fixtures.won(2_000))
        #expect(rig.machine.ageCheck == nil)
        // Unrestricted slots sell as ever.
        #expect(Self.vendStarted(rig.select("A1")))
    }

    @Test func verifiedThenSoldAsANormalSelection() {
        var rig = Rig(setup: Self.setup())
        rig.insert(2_000)
        let asked = rig.select("A2")
        #expect(asked.events.contains { if case .ageCheckStarted(let check) = $0 { check.slot == "A2" && check.age == 19 } else { false } })
        #expect(!asked.contains { if case .energiseRelay = $0 { true } else { false } })
        #expect(rig.machine.credit == Fixtures.won(2_000))
        rig.advance(seconds: 20)
        let approved = rig.apply(.ageVerified)
        #expect(approved.contains(.energiseRelay("A2", VendID(rawValue: 1))))
        #expect(Self.ended(approved) == .used)
        #expect(rig.machine.credit == Fixtures.won(500))
        #expect(rig.machine.ageCheck == nil)
        rig.apply(.vendEnded(VendID(rawValue: 1), .dropped))
        #expect(rig.machine.ledger.sales == Fixtures.won(1_500))
        // Used once: the next restricted selection is checked again.
        rig.insert(1_000)
        #expect(rig.select("A2").events.contains { if case .ageCheckStarted = $0 { true } else { false } })
    }

    @Test func approvalWaitsForThePaymentWithinItsTimeout() {
        var rig = Rig(setup: Self.setup())
        rig.insert(1_000)
        rig.select("A2")
        let approved = rig.apply(.ageVerified)
        #expect(approved.rejections == [.insufficientCredit("A2", price: Fixtures.won(1_500), credit: Fixtures.won(1_000))])
        #expect(rig.machine.ageCheck?.isApproved == true)
        rig.insert(500)
        rig.advance(seconds: 30)
        let sold = rig.select("A2")
        #expect(Self.vendStarted(sold))
        #expect(Self.ended(sold) == .used)
    }

    @Test func timedOutMovesNoMoney() {
        var rig = Rig(setup: Self.setup())
        rig.insert(2_000)
        rig.select("A2")
        rig.advance(seconds: 59)
        #expect(Self.ended(rig.apply(.tick)) == nil)
        rig.advance(seconds: 1)
        #expect(Self.ended(rig.apply(.tick)) == .timedOut)
        // Too late: the verifier's signal finds nothing to approve.
        #expect(rig.apply(.ageVerified).rejections == [.noAgeCheck])
        #expect(rig.machine.credit == Fixtures.won(2_000))
        #expect(rig.machine.pendingVend == nil)
    }

    @Test func coinReturnCancelsTheCheckOnly() {
        var rig = Rig(setup: Self.setup())
        rig.insert(2_000)
        rig.select("A2")
        let cancelled = rig.apply(.coinReturnPressed)
        #expect(Self.ended(cancelled) == .cancelled)
        #expect(!cancelled.contains { if case .payOut = $0 { true } else { false } })
        #expect(rig.machine.credit == Fixtures.won(2_000))
        // A second press returns the credit as ever.
        #expect(rig.apply(.coinReturnPressed).contains { if case .payOut = $0 { true } else { false } })
    }

    /// A verifier that answers (a card reader's own check) is asked with the age, told when the
    /// check ends unanswered, and may say no: the check ends, no money moves, a new selection asks again.
    @Test func theVerifierIsAskedAndMaySayNo() {
        var rig = Rig(setup: Self.setup())
        rig.insert(2_000)
        #expect(rig.select("A2").contains(.requestAgeCheck(age: 19)))
        let refused = rig.apply(.ageRefused(.tooYoung))
        #expect(Self.ended(refused) == .tooYoung)
        // It answered: nothing to cancel.
        #expect(!refused.contains(.cancelAgeCheck))
        #expect(rig.machine.ageCheck == nil)
        #expect(rig.machine.credit == Fixtures.won(2_000))
        #expect(rig.apply(.ageRefused(.noAge)).rejections == [.noAgeCheck])
        // Chosen again: asked again; coin return cancels it at the verifier too.
        #expect(rig.select("B1").contains(.requestAgeCheck(age: 20)))
        let cancelled = rig.apply(.coinReturnPressed)
        #expect(Self.ended(cancelled) == .cancelled)
        #expect(cancelled.contains(.cancelAgeCheck))
        // A timeout tells the verifier too; an approval then a vend does not.
        rig.select("A2")
        rig.advance(seconds: 60)
        #expect(rig.apply(.tick).contains(.cancelAgeCheck))
        rig.select("A2")
        let sold = rig.apply(.ageVerified)
        #expect(Self.ended(sold) == .used)
        #expect(!sold.contains(.cancelAgeCheck))
    }

    /// The reader may be lost mid-check, or say no after an approval it already gave.
    @Test func aLostVerifierEndsTheCheckAndALateNoChangesNothing() {
        var rig = Rig(setup: Self.setup())
        rig.insert(1_000)
        rig.select("A2")
        #expect(Self.ended(rig.apply(.ageRefused(.verifierLost))) == .verifierLost)
        rig.select("A2")
        // Approved but not paid yet (1 500 > 1 000): a "no" now does not take the approval away.
        rig.apply(.ageVerified)
        #expect(rig.machine.ageCheck?.isApproved == true)
        #expect(rig.apply(.ageRefused(.tooYoung)).rejections == [.noAgeCheck])
        #expect(rig.machine.ageCheck?.isApproved == true)
    }

    @Test func anApprovalDoesNotCoverAHigherAge() {
        var rig = Rig(setup: Self.setup())
        rig.insert(500)
        rig.select("A2")
        rig.apply(.ageVerified)  // 19+ verified; not enough credit yet
        rig.insert(1_000)
        let higher = rig.select("B1")  // 20+
        #expect(!Self.vendStarted(higher))
        #expect(Self.ended(higher) == .cancelled)
        #expect(rig.machine.ageCheck?.slot == "B1")
        #expect(rig.machine.ageCheck?.age == 20)
        #expect(rig.machine.ageCheck?.isApproved == false)
        #expect(rig.machine.credit == Fixtures.won(1_500))
    }

    @Test func aRestartVoidsAnApprovalAndReplaysExactly() throws {
        var rig = Rig(setup: Self.setup())
        var inputs: [(Input, Instant)] = []
        func step(_ input: Input) {
            inputs.append((input, rig.now))
            rig.apply(input)
        }
        let initial = rig.machine
        step(.coinInserted(value: Fixtures.won(1_000), event: CoinEventID(source: "test", sequence: 1)))
        step(.slotSelected("A2"))
        step(.ageVerified)
        // vendd restarts here: the saved state holds the approval, the restart ends it.
        let saved = try JSON.roundTrip(rig.machine)
        #expect(saved == rig.machine)
        var restarted = saved
        let voided = restarted.apply(.ageCheckVoided, at: rig.now)
        #expect(Self.ended(voided) == .restarted)
        #expect(restarted.credit == Fixtures.won(1_000))
        #expect(restarted.ledger == rig.machine.ledger)
        #expect(restarted.ageCheck == nil)
        // Replaying the journal from the start gives the same machine.
        var replayed = initial
        for (input, at) in inputs { _ = replayed.apply(input, at: at) }
        _ = replayed.apply(.ageCheckVoided, at: rig.now)
        #expect(replayed == restarted)
        // The check must be done again.
        var next = restarted
        let again = next.apply(.slotSelected("A2"), at: rig.now)
        #expect(again.events.contains { if case .ageCheckStarted = $0 { true } else { false } })
    }

    @Test func aReloadWithoutTheVerifierEndsTheCheck() {
        var rig = Rig(setup: Self.setup())
        rig.insert(2_000)
        rig.select("A2")
        #expect(Self.ended(rig.apply(.reconfigure(Self.setup(verifier: false)))) == .reloaded)
        #expect(rig.machine.credit == Fixtures.won(2_000))
    }
}
