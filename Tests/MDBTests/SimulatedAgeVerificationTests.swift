import MDB
import SimulatedMDB
import Testing

/// The simulated reader's embedded age verification (DRAVP, DRAVS) against SENVEND's integration
/// notes (senvend/mdb age_verification.md: its raw trace, flows and aborts) and the DCM5 samples
/// of MDB 4.3, driven with raw blocks exactly as those bytes: every command ACKed at once, every
/// answer on a later POLL.
@Suite struct SimulatedAgeVerificationTests {
    typealias Reader = SimulatedCashlessReader
    let reader = SimulatedCashlessReader(level: 3, maximumResponseTime: 200)

    static let tagP: [UInt8] = [0x44, 0x52, 0x41, 0x56, 0x50]
    static let tagS: [UInt8] = [0x44, 0x52, 0x41, 0x56, 0x53]
    /// DRAVP with the age `age` (SENVEND: `17 FF 05 06 12 44 52 41 56 50`).
    static func dravp(_ age: UInt8) -> MDBBlock { MDBBlock(0x17, [0xFF, 0x05, 0x06, age] + tagP) }
    /// DRAVS (SENVEND: `17 FF 06 06 00 44 52 41 56 53`).
    static let dravs = MDBBlock(0x17, [0xFF, 0x06, 0x06, 0x00] + tagS)
    static let poll = MDBBlock(0x12)
    /// The DRAVP answer: `FF 05 06 00 44 52 41 56 50`.
    static let dravpReply: MDBAnswer = .data([0xFF, 0x05, 0x06, 0x00] + tagP)
    /// A DRAVS answer: `FF 06 07 Z4 Z5 44 52 41 56 53`.
    static func dravsReply(_ z4: UInt8, _ z5: UInt8) -> MDBAnswer { .data([0xFF, 0x06, 0x07, z4, z5] + tagS) }
    static let approved = dravsReply(0x1E, 0x10)
    static let tooYoung = dravsReply(0x0E, 0x10)
    static let noAge = dravsReply(0x00, 0x00)

    func send(_ block: MDBBlock) -> MDBAnswer { reader.respond(to: block) }
    func send(_ command: CashlessCommand) -> MDBAnswer { reader.respond(to: command.block(for: .cashless1)) }
    func poll() -> MDBAnswer { send(Self.poll) }

    /// SENVEND's initialisation with age verification: … EXPANSION ENABLE OPTIONS, DRAVP (ACK),
    /// POLL (DRAVP), then READER ENABLE. `age` nil: no DRAVP.
    func initialise(age: UInt8? = 0x12) {
        #expect(send(.reset) == .ack)
        #expect(poll() == .data([0x00]), "JUST RESET")
        guard case .data = send(MDBBlock(0x11, [0x00, 0x03, 0x20, 0x01, 0x00])) else {
            Issue.record("no READER CONFIG DATA")
            return
        }
        #expect(send(MDBBlock(0x11, [0x01, 0xFF, 0xFF, 0x00, 0x00])) == .ack)
        guard case .data = send(.requestID(manufacturer: "VND", serialNumber: "1", model: "vendd", softwareVersion: 0x0100)) else {
            Issue.record("no PERIPHERAL ID")
            return
        }
        #expect(send(MDBBlock(0x17, [0x04, 0x00, 0x00, 0x00, 0x20])) == .ack, "always idle")
        if let age {
            #expect(send(Self.dravp(age)) == .ack)
            #expect(poll() == Self.dravpReply)
        }
        #expect(send(MDBBlock(0x14, [0x01])) == .ack)
        #expect(reader.state == .enabled)
    }

    /// DRAVS ACKed; the customer is prompted and nothing comes before they act.
    func askForVerification() {
        #expect(send(Self.dravs) == .ack)
        #expect(reader.isAwaitingAgeVerification)
        #expect(poll() == .ack, "nothing before the customer acts")
        #expect(poll() == .ack)
    }

    @Test func dravpIsAckedAndItsAnswerComesOnTheNextPoll() {
        initialise(age: nil)
        #expect(reader.requiredAge == nil, "off after RESET")
        #expect(send(Self.dravp(0x12)) == .ack, "ACKed, not answered with data")
        #expect(reader.requiredAge == 18)
        #expect(poll() == Self.dravpReply)
        #expect(poll() == .ack, "answered once")
        // The age changes: a new DRAVP, a new answer.
        #expect(send(Self.dravp(0x15)) == .ack)
        #expect(poll() == Self.dravpReply)
        #expect(reader.requiredAge == 21)
        #expect(reader.agesReceived == [0x12, 0x15])
        #expect(reader.verificationRequests.isEmpty && reader.verificationOutcomes.isEmpty)
    }

    /// senvend/mdb age_verification.md, "Embedded Age Verification (Success)": DRAVS, POLL →
    /// DRAVS, then VEND REQUEST → VEND APPROVED → VEND SUCCESS.
    @Test func anOldEnoughCustomerIsApprovedOnALaterPollAndThenPays() {
        initialise()
        askForVerification()
        #expect(reader.presentID(age: 18), "at least the age set")
        #expect(!reader.isAwaitingAgeVerification)
        #expect(poll() == Self.approved)
        #expect(poll() == .ack)
        #expect(send(MDBBlock(0x13, [0x00, 0x00, 0x3C, 0x00, 0x0B])) == .ack)
        #expect(poll() == .data([0x05, 0x00, 0x3C]), "VEND APPROVED")
        #expect(send(MDBBlock(0x13, [0x02, 0x00, 0x0B])) == .ack)
        #expect(reader.verificationRequests == [18])
        #expect(reader.verificationOutcomes == [.approved])
        #expect(reader.charged == [0x3C])
    }

    @Test func aYoungerCustomerIsNotApproved() {
        initialise()
        askForVerification()
        #expect(reader.presentID(age: 17))
        #expect(poll() == Self.tooYoung)
        #expect(poll() == .ack)
        #expect(reader.verificationOutcomes == [.tooYoung])
        #expect(!reader.presentID(age: 30), "no longer prompting: the verification is over")
    }

    @Test func aCardWithoutAReadableAgeIsNotApproved() {
        initialise()
        askForVerification()
        #expect(reader.presentIDWithoutAge())
        #expect(poll() == Self.noAge)
        #expect(reader.verificationOutcomes == [.noAgeRead])
    }

    /// senvend/mdb age_verification.md, abort option 5: the reader answers DRAVS "not approved".
    @Test func theBackButtonAnswersNotApproved() {
        initialise()
        askForVerification()
        #expect(reader.pressBack())
        #expect(poll() == Self.noAge)
        #expect(poll() == .ack)
        #expect(!reader.isAwaitingAgeVerification)
        #expect(reader.verificationOutcomes == [.aborted(.backButton)])
        #expect(!reader.pressBack(), "nothing to go back from")
    }

    /// Abort option 1, in the always-idle mode: the VEND REQUEST proceeds as usual and the DRAVS
    /// is never answered.
    @Test func aVendRequestAbortsTheVerificationAndProceeds() {
        initialise()
        askForVerification()
        #expect(send(MDBBlock(0x13, [0x00, 0x00, 0x3C, 0x00, 0x0B])) == .ack)
        #expect(!reader.isAwaitingAgeVerification)
        #expect(reader.verificationOutcomes == [.aborted(.vendRequest)])
        #expect(!reader.presentID(age: 40), "the prompt is gone")
        #expect(poll() == .data([0x05, 0x00, 0x3C]), "VEND APPROVED, no DRAVS answer")
        #expect(send(MDBBlock(0x13, [0x02, 0x00, 0x0B])) == .ack)
        #expect(poll() == .ack)
        #expect(reader.charged == [0x3C])
    }

    /// Abort options 2 and 3: DRAVP 00h or FFh answers DRAVP only and resets the age, so the next
    /// DRAVS without a new DRAVP is refused (this reader's choice: `00 00`, nobody prompted).
    @Test(arguments: [UInt8(0x00), 0xFF])
    func dravpOffOrSwitchingOnAbortsAndForgetsTheAge(age: UInt8) {
        initialise()
        askForVerification()
        #expect(send(Self.dravp(age)) == .ack)
        #expect(!reader.isAwaitingAgeVerification)
        #expect(reader.requiredAge == nil)
        #expect(poll() == Self.dravpReply, "the DRAVP answer, no DRAVS answer")
        #expect(poll() == .ack)
        #expect(!reader.presentID(age: 40))
        // DRAVS with no age set: not approved, at once.
        #expect(send(Self.dravs) == .ack)
        #expect(!reader.isAwaitingAgeVerification, "nobody is prompted")
        #expect(poll() == Self.noAge)
        #expect(poll() == .ack)
        // A new DRAVP, and the next DRAVS is verified again.
        #expect(send(Self.dravp(0x13)) == .ack)
        #expect(poll() == Self.dravpReply)
        askForVerification()
        #expect(reader.presentID(age: 19))
        #expect(poll() == Self.approved)
        let abort: Reader.AgeVerificationAbort = age == 0 ? .ageOff : .ageWillBeSwitchedOn
        #expect(reader.agesReceived == [0x12, age, 0x13])
        #expect(reader.verificationRequests == [18, nil, 19])
        #expect(reader.verificationOutcomes == [.aborted(abort), .refusedWithoutAge, .approved])
    }

    /// Abort option 4, and "every power-up or RESET: age verification off".
    @Test func aResetAbortsTheVerificationAndTurnsAgeVerificationOff() {
        initialise()
        askForVerification()
        #expect(send(MDBBlock(0x10)) == .ack)
        #expect(reader.requiredAge == nil)
        #expect(!reader.isAwaitingAgeVerification)
        #expect(poll() == .data([0x00]), "JUST RESET alone")
        #expect(!reader.presentID(age: 40))
        initialise(age: nil)
        #expect(send(Self.dravs) == .ack)
        #expect(poll() == Self.noAge, "no age since the RESET: refused")
        #expect(reader.verificationOutcomes == [.aborted(.reset), .refusedWithoutAge])
        #expect(reader.verificationRequests == [18, nil])
    }

    @Test func theReadersOwnPowerCycleAlsoAborts() {
        initialise()
        askForVerification()
        reader.resetItself()
        #expect(poll() == .data([0x00]))
        #expect(reader.requiredAge == nil)
        #expect(reader.verificationOutcomes == [.aborted(.reset)])
    }

    @Test(arguments: [1, 3])
    func aDravsAnswerDelayedByKPolls(k: Int) {
        initialise()
        askForVerification()
        reader.faults.ageAnswerPolls = k
        #expect(reader.presentID(age: 25))
        for index in 0..<k { #expect(poll() == .ack, "POLL \(index + 1) of \(k) delayed") }
        #expect(poll() == Self.approved)
        #expect(poll() == .ack)
        #expect(reader.faults.ageAnswerPolls == 0, "once")
    }

    @Test func aDravpAnswerDelayedByTwoPolls() {
        initialise(age: nil)
        reader.faults.ageAnswerPolls = 2
        #expect(send(Self.dravp(0x12)) == .ack)
        #expect(poll() == .ack)
        #expect(poll() == .ack)
        #expect(poll() == Self.dravpReply)
    }

    /// Noise on the POLL that carries the answer: no answer, and the reader, not ACKed, sends it
    /// again on the next POLL.
    @Test func aDravsAnswerLostOnceIsSentAgain() {
        initialise()
        reader.faults.loseAgeAnswer = true
        #expect(send(Self.dravp(0x12)) == .ack)
        #expect(poll() == Self.dravpReply, "a DRAVP answer is not the one lost")
        askForVerification()
        #expect(reader.presentID(age: 12))
        #expect(poll() == .noAnswer)
        #expect(poll() == Self.tooYoung)
        #expect(poll() == .ack)
        #expect(!reader.faults.loseAgeAnswer)
        #expect(reader.verificationOutcomes == [.tooYoung], "one verification")
    }

    /// The block sent again is the same block: what the reader queued after the lost answer
    /// (here a card tapped) comes on the POLL after it, not inside it.
    @Test func aLostAnswerIsSentAgainAloneAndWhatCameAfterItFollows() {
        initialise()
        askForVerification()
        reader.faults.loseAgeAnswer = true
        #expect(reader.presentIDWithoutAge())
        #expect(poll() == .noAnswer)
        reader.presentCard(funds: 100)
        #expect(poll() == Self.noAge)
        guard case .data(let bytes) = poll() else {
            Issue.record("no BEGIN SESSION")
            return
        }
        #expect(bytes.first == 0x03, "BEGIN SESSION")
        #expect(poll() == .ack)
    }

    @Test func senvendsApprovalBytesCanBeChosen() {
        initialise()
        reader.approvedStatus = .senvendApproved
        askForVerification()
        #expect(reader.presentID(age: 65))
        #expect(poll() == Self.dravsReply(0x9F, 0x10))
        #expect(Reader.AgeStatus.senvendApproved.isOldEnough && Reader.AgeStatus.approved.isOldEnough)
        #expect(!Reader.AgeStatus.tooYoung.isOldEnough && !Reader.AgeStatus.noAge.isOldEnough)
    }

    /// A diagnostic response takes the rest of its block: it goes last, one per POLL, and what
    /// came before it keeps its order.
    @Test func anAgeAnswerEndsItsBlock() {
        initialise()
        reader.presentCard(funds: 100)
        #expect(send(Self.dravp(0x00)) == .ack)
        #expect(send(Self.dravs) == .ack, "no age: refused")
        guard case .data(let bytes) = poll() else {
            Issue.record("no answer")
            return
        }
        #expect(bytes.first == 0x03, "BEGIN SESSION first")
        #expect(Array(bytes.suffix(9)) == [0xFF, 0x05, 0x06, 0x00] + Self.tagP, "then the DRAVP answer, last")
        #expect(poll() == Self.noAge, "the DRAVS answer on the next POLL")
        #expect(poll() == .ack)
    }

    @Test func onlyTheExactCommandsAreUnderstood() {
        initialise(age: nil)
        #expect(send(MDBBlock(0x17, [0xFF, 0x05, 0x05, 0x12] + Self.tagP)) == .noAnswer, "Y2 not 06h")
        #expect(send(MDBBlock(0x17, [0xFF, 0x05, 0x06, 0x12] + Self.tagS)) == .noAnswer, "DRAVP with the DRAVS tag")
        #expect(send(MDBBlock(0x17, [0xFF, 0x06, 0x06, 0x12] + Self.tagS)) == .noAnswer, "DRAVS with an age")
        #expect(send(MDBBlock(0x17, [0xFF, 0x05, 0x06, 0x12])) == .noAnswer, "no tag")
        #expect(send(MDBBlock(0x17, [0xFF, 0x07, 0x06, 0x00] + Self.tagS)) == .noAnswer, "another function")
        #expect(poll() == .ack)
        #expect(reader.agesReceived.isEmpty && reader.verificationRequests.isEmpty)
        reader.supportsAgeVerification = false
        #expect(send(Self.dravp(0x12)) == .noAnswer, "a reader without age verification ignores it")
        #expect(reader.requiredAge == nil)
    }

    @Test func aDravsDuringAVendIsOutOfSequence() {
        initialise()
        #expect(send(MDBBlock(0x13, [0x00, 0x00, 0x3C, 0x00, 0x0B])) == .ack)
        #expect(send(Self.dravs) == .ack)
        #expect(!reader.isAwaitingAgeVerification)
        #expect(poll() == .data([0x0B, Reader.State.vend.rawValue, 0x05, 0x00, 0x3C]), "COMMAND OUT OF SEQUENCE, then VEND APPROVED")
        #expect(reader.verificationRequests.isEmpty)
    }

    @Test func aSecondDravsWhileOneIsAwaitedGetsOneAnswer() {
        initialise()
        askForVerification()
        #expect(send(Self.dravs) == .ack)
        #expect(reader.presentID(age: 18))
        #expect(poll() == Self.approved)
        #expect(poll() == .ack)
        #expect(reader.verificationRequests == [18, 18])
        #expect(reader.verificationOutcomes == [.approved])
    }
}
