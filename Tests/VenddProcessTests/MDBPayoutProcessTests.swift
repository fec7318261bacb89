import Foundation
import MDBSocketSimulator
import SimulatedMDB
import Testing
import VendControl
import VenddTestSupport

/// The real vendd killed with SIGKILL while the MDB changer pays change (a level-2 changer
/// paying one coin per POLL), then started again: the payout is resolved from the changer's
/// tubes, never paid a second time.
@Suite(.oneRealProcessTestAtATime) struct MDBPayoutProcessTests {
    static func won(_ text: String?) -> Int { Int(text ?? "") ?? -1 }

    /// A 5,000 won note for A1 (1,200 won): 3,800 won of change (7 × 500 + 3 × 100), and vendd
    /// killed once the changer has paid `coins` of it. Returns what the changer had paid then.
    static func killMidPayout(_ rig: MDBProcessTests.Rig, after coins: Int) throws -> Int {
        rig.simulator.with {
            $0.changer.level = 2
            $0.changer.faults.slowPayout = true
        }
        try rig.startSelling()
        _ = try rig.daemon.waitUntil("the changer's tubes known") { $0.exactChangeOnly == false }
        rig.simulator.with { $0.bills.insert(type: 1) }
        _ = try rig.daemon.waitUntil("the note credited") { $0.credit == "5000" }
        try rig.daemon.send(.sim(.press(slot: "A1")))
        #expect(rig.simulator.wait { $0.changer.coinsPaid.count >= coins }, "the change never started; log:\n\(rig.daemon.log)")
        rig.daemon.signal(SIGKILL)
        _ = try rig.daemon.waitForExit()
        return rig.taken.paid
    }

    /// The books after a restart: every won taken is a sale, change, a refund, unknown or credit.
    static func expectBalanced(_ status: StatusReport) {
        let books = status.books
        #expect(
            won(books.billsIn) + won(books.coinsIn) == won(books.sales) + won(books.changePaid) + won(books.refunds)
                + won(books.unknownPayouts) + won(status.credit), "\(books), credit \(status.credit)")
    }

    @Test func killedMidPayoutTheChangerPaysNothingTwiceAndTheRestIsCredit() throws {
        let rig = try MDBProcessTests.Rig()
        defer { rig.tearDown() }
        let paid = try Self.killMidPayout(rig, after: 3)
        #expect(paid >= 1_500 && paid < 3_800, "the kill did not land mid-payout: \(paid) won paid")
        let dispenses = rig.simulator.with { $0.bus.count(0x0D) }

        try rig.daemon.start()
        let status = try rig.daemon.waitUntil("the payout resolved", timeout: 20) { $0.payoutInProgress == nil }
        #expect(Self.won(status.books.changePaid) == paid, "the books say \(status.books.changePaid ?? "-"), the changer paid \(paid)")
        #expect(Self.won(status.books.unknownPayouts) == 0)
        #expect(Self.won(status.credit) == 3_800 - paid)
        Self.expectBalanced(status)
        try rig.daemon.waitForLog("was in flight when vendd stopped; the payout devices report")
        let resolution = rig.daemon.log.split(separator: "\n").filter { $0.contains("was in flight when vendd stopped") }
        #expect(resolution.contains { $0.contains("PAYOUT=1") && $0.contains("PAID=\(paid)") && $0.contains("UNKNOWN=0") }, "\(resolution)")
        print("MDB payout resolved at the restart:\n" + resolution.joined(separator: "\n"))
        // Nothing more leaves by itself.
        usleep(1_000_000)
        #expect(rig.simulator.with { $0.bus.count(0x0D) } == dispenses, "no DISPENSE after the restart")
        #expect(rig.taken.paid == paid)

        // The customer presses coin return: the rest is paid, once.
        try rig.daemon.send(.coinReturn)
        let settled = try rig.daemon.waitUntil("the rest paid", timeout: 20) { $0.payoutInProgress == nil && $0.credit == "0" }
        #expect(rig.taken.paid == 3_800)
        #expect(Self.won(settled.books.changePaid) + Self.won(settled.books.refunds) == 3_800)
        Self.expectBalanced(settled)
        #expect(try rig.daemon.stop() == 0)
    }

    @Test func aChangerThatCannotCountTheTubeItPaidFromLeavesThePayoutUnknown() throws {
        let rig = try MDBProcessTests.Rig()
        defer { rig.tearDown() }
        let paid = try Self.killMidPayout(rig, after: 2)
        #expect(paid > 0 && paid < 3_800)
        let dispenses = rig.simulator.with { $0.bus.count(0x0D) }
        // While vendd is down the 500 won tube's sensor fails: it reads full with 0 coins.
        rig.simulator.with { $0.changer.breakTubeSensor(type: 3) }

        try rig.daemon.start()
        let status = try rig.daemon.waitUntil("the payout resolved", timeout: 20) { $0.payoutInProgress == nil }
        #expect(Self.won(status.books.changePaid) == 0)
        #expect(Self.won(status.books.unknownPayouts) == 3_800, "neither paid nor credit: for the technician")
        #expect(Self.won(status.credit) == 0)
        Self.expectBalanced(status)
        try rig.daemon.waitForLog("cannot tell the rest: the 500 tube is not counted")
        usleep(500_000)
        #expect(rig.simulator.with { $0.bus.count(0x0D) } == dispenses, "no DISPENSE after the restart")
        #expect(rig.taken.paid == paid)
        #expect(try rig.daemon.stop() == 0)
    }
}
