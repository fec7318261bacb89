import MDB
import MDBSocketSimulator
import SimulatedMDB
import Synchronization
import Testing
import VendSettings
import VendTime
import VendingCore

@testable import VendDrivers
@testable import VendHardware

/// What the changer records of its tubes for a payout, and how a payout cut short by a restart
/// is judged from them.
@Suite struct MDBChangerEvidenceTests {
    func won(_ amount: Int64) -> Money { MDBRig.won(amount) }
    func tubes(_ counts: [Int?]) -> [ChangeStock] {
        zip([10, 50, 100, 500], counts).map { ChangeStock(value: won(Int64($0.0)), count: $0.1) }
    }

    @Test func theTubesAreRecordedOnceCountedAndBeforeTheFirstCoinIsAskedFor() throws {
        for level: UInt8 in [2, 3] {
            let rig = MDBRig(changerLevel: level)
            rig.changer.tubes[0...3] = [10, 10, 10, 10]
            try rig.start()
            rig.pay(600)
            // Taken after the last POLL: a coin validated before COIN TYPE refused coins is
            // reported by the POLL that follows, and is already in the tubes when they are counted.
            rig.changer.insert(type: 2)
            try rig.run(for: .seconds(3))
            #expect(rig.results.map(\.paid) == [won(600)])
            let holdings = rig.holdings.all
            #expect(holdings.count == 1, "level \(level): \(holdings)")
            #expect(holdings.first?.holding == tubes([10, 10, 11, 10]))
            #expect(holdings.first?.moneyCommandsBefore == 0)
        }
    }

    @Test func coinsPaidByTheChangersButtonsDuringAPayoutReviseWhatItStartedFrom() throws {
        let rig = MDBRig(changerLevel: 2)
        rig.changer.tubes[0...3] = [10, 10, 10, 10]
        rig.changer.faults.slowPayout = true
        try rig.start()
        rig.pay(1000)
        try rig.run(for: .milliseconds(300))
        #expect(rig.holdings.all.count == 1)
        rig.changer.manualDispense(type: 1, count: 2)
        try rig.run(for: .seconds(3))
        #expect(rig.results.map(\.paid) == [won(1000)])
        #expect(rig.holdings.all.map(\.holding) == [tubes([10, 10, 10, 10]), tubes([10, 8, 10, 10])])
        // What the tubes would hold had it paid nothing, against what they hold: the payout.
        let now = try #require(rig.tubeReadings.last)
        #expect(TubeHolding.paid(before: tubes([10, 8, 10, 10]), now: now, of: won(1000)) == InterruptedPayoutPart(paid: won(1000), cannotTell: nil))
    }

    @Test func aTubeFullWithZeroOrAt255IsNotCounted() {
        let status = TubeStatus(full: [1, 2], counts: [3, 0, 7, 255])
        #expect(TubeHolding(status).byValue([0: won(10), 1: won(50), 2: won(100), 3: won(500)]) == tubes([3, nil, 7, nil]))
        // Two types of one value: counted together, and not at all if either is not counted.
        #expect(TubeHolding(status).byValue([0: won(10), 2: won(10)]) == [ChangeStock(value: won(10), count: 10)])
        #expect(TubeHolding(status).byValue([0: won(10), 1: won(10)]) == [ChangeStock(value: won(10), count: nil)])
    }

    @Test(
        arguments: [
            // before, now, paid, can tell
            ([20, 20, 20, 20], [20, 20, 17, 13], 3_800, true),
            ([20, 20, 20, 20], [20, 20, 20, 20], 0, true),
            ([20, 20, 20, nil], [20, 20, 17, 13], 300, false),
            ([20, 20, 20, 20], [20, 20, 17, nil], 300, false),
            ([20, 20, 20, 20], [20, 25, 17, 13], 3_800, false),
            // More left than 3,800 could take: the counts say nothing.
            ([20, 20, 20, 20], [0, 0, 0, 0], 0, false),
        ] as [([Int?], [Int?], Int64, Bool)])
    func anInterruptedPayoutIsWhatLeftTheTubes(before: [Int?], now: [Int?], paid: Int64, canTell: Bool) {
        let part = TubeHolding.paid(before: tubes(before), now: tubes(now), of: won(3_800))
        #expect(part.paid == won(paid))
        #expect((part.cannotTell == nil) == canTell, "\(part)")
    }

    @Test func aChangerThatNeverReportsItsTubesLeavesItsPartUnknownAfterTheWait() {
        let clock = ManualTimekeeper()
        let settings = MDBSettings(
            port: "unix:/nonexistent/mdb.sock", currency: MDBRig.krw, currencyNumeric: 410, pollInterval: .milliseconds(150),
            changer: MDBChangerSettings(coins: MDBRig.coins), billValidator: nil)
        let changer = MDBChangerPayout(bus: MDBBus(settings: settings, timekeeper: clock))
        let parts = Mutex<[InterruptedPayoutPart]>([])
        changer.resolveInterrupted(InterruptedPayoutRecord(amount: won(3_800), keptCounter: nil, holding: tubes([20, 20, 20, 20]))) { part in
            parts.withLock { $0.append(part) }
        }
        clock.advance(by: MDBChangerPayout.tubesWait - .seconds(1))
        #expect(parts.withLock { $0 }.isEmpty, "waits for the changer to come up")
        clock.advance(by: .seconds(1))
        #expect(
            parts.withLock { $0 } == [InterruptedPayoutPart(paid: won(0), cannotTell: "it did not report its tubes within 30.0 seconds of the start")]
        )

        // A payout recorded before the changer said what it held: nothing to judge by.
        changer.resolveInterrupted(InterruptedPayoutRecord(amount: won(3_800), keptCounter: nil, holding: nil)) { part in
            parts.withLock { $0.append(part) }
        }
        #expect(parts.withLock { $0.last?.cannotTell }?.hasPrefix("its tubes were not counted when it was asked") == true)
    }
}
