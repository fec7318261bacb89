import Foundation
import MDB
import SimulatedMDB
import Testing
import VendingCore

@testable import VendDrivers

/// The reader's own age check (DRAVP, DRAVS) against the card reader written clean-room from
/// SENVEND's notes and the DCM5 samples, with the machine core in the loop: A2 sells to 19 and
/// up, the first reader checks, and the customer pays by card (selection first).
@Suite struct ReaderAgeCheckTests {
    static func rig(_ reader: SimulatedCashlessReader) throws -> CardRig {
        let rig = CardRig(readers: [reader], ageChecked: 19)
        try rig.start()
        return rig
    }

    @Test func anIDOldEnoughSellsByCard() throws {
        let reader = SimulatedCashlessReader()
        let rig = try Self.rig(reader)
        rig.select("A2")
        try rig.run(for: .milliseconds(500))
        #expect(reader.isAwaitingAgeVerification)
        #expect(reader.agesReceived == [19] && reader.verificationRequests == [19])
        #expect(rig.pulses.isEmpty && reader.requested.isEmpty, "nothing asked of the card before the age")
        reader.presentID(age: 25)
        try rig.run(for: .seconds(1))
        #expect(reader.verificationOutcomes == [.approved])
        #expect(rig.pulses == ["A2"])
        #expect(reader.charged == [150])
        #expect(rig.machine.ageCheck == nil)
        CashlessReaderTests.expectBooksAgree(rig, sales: 1)
    }

    @Test(arguments: [AgeCheckEnd.tooYoung, .noAge])
    func aRefusalEndsTheCheckAndTheNextAsksAgainWithoutSettingTheAge(_ refusal: AgeCheckEnd) throws {
        let reader = SimulatedCashlessReader()
        let rig = try Self.rig(reader)
        rig.select("A2")
        try rig.run(for: .milliseconds(500))
        if refusal == .tooYoung { reader.presentID(age: 18) } else { reader.pressBack() }
        try rig.run(for: .milliseconds(500))
        #expect(rig.endings == [refusal])
        #expect(rig.machine.ageCheck == nil)
        #expect(rig.pulses.isEmpty && reader.charged.isEmpty)
        rig.select("A2")
        try rig.run(for: .milliseconds(500))
        #expect(reader.agesReceived == [19], "the age is set already: DRAVS alone")
        #expect(reader.verificationRequests == [19, 19])
        reader.presentIDWithoutAge()
        try rig.run(for: .milliseconds(500))
        #expect(rig.endings == [refusal, .noAge])
        CashlessReaderTests.expectBooksAgree(rig, sales: 0)
    }

    /// Coin return or the timeout ends the check: the reader's prompt is turned off (DRAVP 00h),
    /// and the next check sets the age again.
    @Test(arguments: [false, true])
    func aCheckEndedUnansweredTurnsTheReadersPromptOff(byTimeout: Bool) throws {
        let reader = SimulatedCashlessReader()
        let rig = try Self.rig(reader)
        rig.select("A2")
        try rig.run(for: .milliseconds(500))
        if byTimeout { try rig.run(for: .seconds(60)) } else { rig.apply(.coinReturnPressed) }
        try rig.run(for: .milliseconds(500))
        #expect(rig.endings == [byTimeout ? .timedOut : .cancelled])
        #expect(!reader.isAwaitingAgeVerification)
        #expect(reader.verificationOutcomes == [.aborted(.ageOff)])
        // Too late at the reader: nothing is prompting, so nothing happens.
        #expect(!reader.presentID(age: 30))
        rig.select("A2")
        try rig.run(for: .milliseconds(500))
        #expect(reader.agesReceived == [19, 0, 19])
        reader.presentID(age: 30)
        try rig.run(for: .seconds(1))
        #expect(rig.pulses == ["A2"])
        CashlessReaderTests.expectBooksAgree(rig, sales: 1)
    }

    /// The reader resets (or the interface goes) while it prompts: the check ends, the age is set
    /// again at the next one.
    @Test func aReaderResetMidCheckEndsIt() throws {
        let reader = SimulatedCashlessReader()
        let rig = try Self.rig(reader)
        rig.select("A2")
        try rig.run(for: .milliseconds(500))
        reader.resetItself()
        try rig.run(for: .seconds(2))
        #expect(rig.endings == [.verifierLost])
        rig.select("A2")
        try rig.run(for: .milliseconds(500))
        #expect(reader.agesReceived == [19, 19])
        reader.presentID(age: 19)
        try rig.run(for: .seconds(1))
        #expect(rig.pulses == ["A2"])
        CashlessReaderTests.expectBooksAgree(rig, sales: 1)
    }

    /// The reader's answers at the edges of its timing: held back for POLLs, or lost on the bus
    /// once and sent again.
    @Test(arguments: [(polls: 0, lost: true), (polls: 7, lost: false), (polls: 7, lost: true)])
    func aSlowOrLostAnswerIsStillHeardOnce(_ timing: (polls: Int, lost: Bool)) throws {
        let reader = SimulatedCashlessReader()
        let rig = try Self.rig(reader)
        reader.faults.ageAnswerPolls = timing.polls
        rig.select("A2")
        try rig.run(for: .milliseconds(500))
        reader.faults.ageAnswerPolls = timing.polls
        reader.faults.loseAgeAnswer = timing.lost
        reader.presentID(age: 40)
        try rig.run(for: .seconds(3))
        #expect(rig.pulses == ["A2"])
        #expect(rig.endings == [.used])
        CashlessReaderTests.expectBooksAgree(rig, sales: 1)
    }

    /// Seeded customers at the reader: old enough, too young, no ID, giving up, walking away,
    /// coin return; slow and lost answers; resets; vendd killed just after an adult's ID, before
    /// or after its answer was heard. Every A2 sale follows an approval the reader gave (without
    /// a kill, every approval is one sale), and the card books equal the reader's.
    @Test func randomizedCustomersSellOnlyWhatTheReaderApproved() throws {
        let environment = ProcessInfo.processInfo.environment
        let runs = environment["VENDD_READER_AGE_RUNS"].flatMap(UInt64.init) ?? 12
        let first = environment["VENDD_READER_AGE_SEED"].flatMap(UInt64.init) ?? 1
        for seed in first..<(first + runs) {
            var random = SeededGenerator(seed: seed)
            let reader = SimulatedCashlessReader()
            let rig = try Self.rig(reader)
            var killed = false
            for _ in 0..<12 {
                reader.faults.ageAnswerPolls = Int(random.next() % 4 == 0 ? random.next() % 10 : 0)
                reader.faults.loseAgeAnswer = random.next() % 5 == 0
                rig.select("A2")
                try rig.run(for: .milliseconds(Int64(100 + random.next() % 400)))
                switch random.next() % 8 {
                case 0, 1: reader.presentID(age: 19 + Int(random.next() % 40))
                case 2: reader.presentID(age: 12 + Int(random.next() % 7))
                case 3: reader.presentIDWithoutAge()
                case 4: reader.pressBack()
                case 5: rig.apply(.coinReturnPressed)
                case 6: reader.resetItself()
                case 7 where random.next() % 2 == 0:
                    // An approval a killed vendd never heard moves no money: the check is done again.
                    reader.presentID(age: 30)
                    try rig.run(for: .milliseconds(Int64(random.next() % 400)))
                    try rig.restart()
                    killed = true
                default: try rig.run(for: .seconds(60))
                }
                try rig.run(for: .seconds(3))
            }
            let approvals = reader.verificationOutcomes.filter { $0 == .approved }.count
            let detail = "seed \(seed): \(rig.pulses.count) sold, \(approvals) approved: \(reader.verificationOutcomes)"
            if killed { #expect(rig.pulses.count <= approvals, "\(detail)") } else { #expect(rig.pulses.count == approvals, "\(detail)") }
            // A kill can end a vend an approval started before its relay: used, nothing dispensed.
            let used = rig.endings.filter { $0 == .used }.count
            #expect(killed ? used >= rig.pulses.count : used == rig.pulses.count, "seed \(seed): one used approval per vend")
            #expect(rig.machine.ageCheck == nil && !reader.isAwaitingAgeVerification, "seed \(seed): nothing left waiting")
            #expect(rig.booksCardMoney == rig.readersNetCharged, "seed \(seed)")
        }
    }
}
