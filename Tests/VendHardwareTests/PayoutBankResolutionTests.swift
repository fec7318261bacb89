import Synchronization
import Testing
import VendTime
import VendingCore

@testable import VendHardware

/// A payout device whose judgement of an interrupted payout is given by the test, when it likes.
final class JudgingDevice: PayoutDevice {
    let identity: String
    var description: String { "device \(identity)" }
    private let pending = Mutex<[(InterruptedPayoutRecord, @Sendable (InterruptedPayoutPart) -> Void)]>([])

    init(_ identity: String) { self.identity = identity }

    func inventory() -> [ChangeStock] { [] }
    func pay(_ amount: Money, completion: @escaping @Sendable (PayoutDeviceResult) -> Void) {
        Issue.record("an interrupted payout must never be paid again")
    }
    func lastPayout() -> LastPayoutReport { LastPayoutReport(counter: nil, paid: won(0), unpaid: won(0), isUnknown: true) }
    func emergencyStop() {}

    func resolveInterrupted(_ record: InterruptedPayoutRecord, completion: @escaping @Sendable (InterruptedPayoutPart) -> Void) {
        pending.withLock { $0.append((record, completion)) }
    }

    var records: [InterruptedPayoutRecord] { pending.withLock { $0.map(\.0) } }

    func judge(_ part: InterruptedPayoutPart) {
        let waiting = pending.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        for (_, completion) in waiting { completion(part) }
    }
}

private func won(_ amount: Int64) -> Money { Money(minorUnits: amount, currency: Currency(code: "KRW", minorDigits: 0)) }

@Suite struct PayoutBankResolutionTests {
    final class Answers: Sendable {
        let all = Mutex<[PayoutBank.Resolution]>([])
        func record(_ resolution: PayoutBank.Resolution) { all.withLock { $0.append(resolution) } }
        var results: [PayoutBankResult] { all.withLock { $0.map(\.result) } }
    }

    @Test func theAnswerWaitsForEveryAskedDeviceAndEachGetsItsOwnEvidence() {
        let hopper = JudgingDevice("hopper"), changer = JudgingDevice("changer"), never = JudgingDevice("never-asked")
        let bank = PayoutBank(devices: [hopper, never, changer], timekeeper: ManualTimekeeper())
        let answers = Answers()
        let tubes = [ChangeStock(value: won(500), count: 20)]
        bank.resolveInterrupted(
            won(3_800), counters: ["hopper": 7], asked: ["hopper", "changer"], holdings: ["changer": tubes], completion: answers.record)
        #expect(hopper.records == [InterruptedPayoutRecord(amount: won(3_800), keptCounter: 7, holding: nil)])
        hopper.judge(InterruptedPayoutPart(paid: won(1_000), cannotTell: nil))
        #expect(answers.results.isEmpty, "the changer has not judged yet")
        #expect(changer.records == [InterruptedPayoutRecord(amount: won(3_800), keptCounter: nil, holding: tubes)])
        #expect(never.records.isEmpty, "a device never asked paid nothing and is not asked")
        changer.judge(InterruptedPayoutPart(paid: won(1_500), cannotTell: nil))
        #expect(answers.results == [PayoutBankResult(paid: won(2_500), unknown: won(0), counters: [:])])
        #expect(answers.all.withLock { $0.first?.findings.map(\.device) } == ["device hopper", "device changer"])
    }

    @Test func oneThatCannotTellMakesTheRestUnknownAndWhatIsPaidIsCapped() {
        let hopper = JudgingDevice("hopper"), changer = JudgingDevice("changer")
        let bank = PayoutBank(devices: [hopper, changer], timekeeper: ManualTimekeeper())
        let answers = Answers()
        bank.resolveInterrupted(won(800), counters: [:], asked: nil, holdings: [:], completion: answers.record)
        hopper.judge(InterruptedPayoutPart(paid: won(500), cannotTell: nil))
        changer.judge(InterruptedPayoutPart(paid: won(100), cannotTell: "a tube reads full with 0"))
        #expect(answers.results == [PayoutBankResult(paid: won(600), unknown: won(200), counters: [:])])

        let again = Answers()
        bank.resolveInterrupted(won(800), counters: [:], asked: ["hopper"], holdings: [:], completion: again.record)
        hopper.judge(InterruptedPayoutPart(paid: won(5_000), cannotTell: nil))
        #expect(again.results == [PayoutBankResult(paid: won(800), unknown: won(0), counters: [:])])
    }

    @Test func anAskedDeviceNoLongerConfiguredCannotTell() {
        let hopper = JudgingDevice("hopper")
        let bank = PayoutBank(devices: [hopper], timekeeper: ManualTimekeeper())
        let answers = Answers()
        bank.resolveInterrupted(won(800), counters: [:], asked: ["hopper", "mdb:/dev/ttyACM0:changer"], holdings: [:], completion: answers.record)
        hopper.judge(InterruptedPayoutPart(paid: won(300), cannotTell: nil))
        #expect(answers.results == [PayoutBankResult(paid: won(300), unknown: won(500), counters: [:])])
        #expect(answers.all.withLock { $0.first?.findings.first?.part.cannotTell } == "it was asked and is no longer configured")
    }
}

/// Found by the power-cut tier: a hopper journaled as asked for less than one of its coins sent
/// no command, so it paid nothing of the payout, even when its counter can no longer say (reset).
@Suite struct SingleCoinResolutionTests {
    @Test func aHopperAskedForLessThanItsCoinPaidNothingEvenAfterAReset() throws {
        // A hopper never used: counter 0, as after a power-up.
        let hopper = try SimulatedHopper(coin: won(500), identity: "hopper", coins: 10, memoryFile: nil, timekeeper: ManualTimekeeper())
        let part = LockedBox<InterruptedPayoutPart?>(nil)
        hopper.resolveInterrupted(InterruptedPayoutRecord(amount: won(420), keptCounter: 5, holding: nil)) { part.set($0) }
        #expect(part.value == InterruptedPayoutPart(paid: won(0), cannotTell: nil))
        hopper.resolveInterrupted(InterruptedPayoutRecord(amount: won(920), keptCounter: 5, holding: nil)) { part.set($0) }
        #expect(part.value?.cannotTell != nil, "a coin may have left: it cannot tell")
    }
}
