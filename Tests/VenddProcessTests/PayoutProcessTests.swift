import Foundation
import Testing
import VendControl
import VenddTestSupport

/// The real vendd giving change through simulated hoppers (500원 and 100원, 60 coins each, a coin
/// every 200 ms), killed with SIGKILL in the middle of a payout.
@Suite(.oneRealProcessTestAtATime) struct PayoutProcessTests {
    static func changeGiving(_ sample: String) -> String {
        sample.replacingOccurrences(of: "  payout: none ", with: "  payout: change ")
            + "\npayout_devices:\n  - { type: cctalk-hopper, coin: 500, address: 3 }\n  - { type: cctalk-hopper, coin: 100, address: 4 }\n"
    }

    /// Won paid out so far, from the hoppers' own levels.
    static func paidByHoppers(_ status: StatusReport) throws -> Int {
        let levels = try #require(status.payoutDevices?.map { $0.coins.first?.count ?? 0 })
        #expect(levels.count == 2)
        return 500 * (60 - levels[0]) + 100 * (60 - levels[1])
    }

    static func won(_ text: String?) -> Int { Int(text ?? "") ?? -1 }

    @Test func killedMidPayoutTheChangeIsNeverPaidTwiceAndTheBooksBalance() throws {
        let daemon = try DaemonHarness(edit: Self.changeGiving)
        defer { daemon.tearDown() }
        try daemon.start()
        _ = try daemon.send(.restock(slot: "A1", count: nil))
        for _ in 0..<8 { _ = try daemon.send(.sim(.coin(amount: "500"))) }
        _ = try daemon.send(.select(slot: "A1"))  // 1 200원 of 4 000원: 2 800원 change
        _ = try daemon.waitUntil("the change to start") { $0.payoutInProgress != nil }
        usleep(500_000)  // a few coins out
        daemon.signal(SIGKILL)
        _ = try daemon.waitForExit()

        try daemon.start()
        let restarted = try daemon.status()
        #expect(restarted.payoutInProgress == nil)
        let books = restarted.books
        let paid = try Self.paidByHoppers(restarted)
        #expect(paid > 0 && paid < 2_800, "the kill did not land mid-payout: \(paid)원 paid")
        #expect(Self.won(books.changePaid) == paid, "the books say \(books.changePaid ?? "-") of change, the hoppers paid \(paid)")
        #expect(Self.won(books.unknownPayouts) == 0)
        #expect(Self.won(restarted.credit) == 2_800 - paid)
        #expect(
            Self.won(books.coinsIn) == Self.won(books.sales) + Self.won(books.changePaid) + Self.won(books.refunds)
                + Self.won(restarted.credit))
        // Logged on the notices' thread, possibly after the status answer.
        try daemon.waitForLog("was in flight when vendd stopped")
        // Nothing more comes out by itself.
        usleep(1_000_000)
        #expect(try Self.paidByHoppers(try daemon.status()) == paid)

        // The customer presses coin return: the rest is paid, once.
        _ = try daemon.send(.coinReturn)
        let settled = try daemon.waitUntil("the rest to be paid") { $0.payoutInProgress == nil && $0.credit == "0" }
        #expect(try Self.paidByHoppers(settled) == 2_800)
        #expect(Self.won(settled.books.changePaid) + Self.won(settled.books.refunds) == 2_800)
        let cash = try daemon.vendctl("cash")
        #expect(cash.status == 0)
        #expect(cash.output.contains("coins in          4,000원") && cash.output.contains("unknown payouts       0원"), "\(cash.output)")
        print("vendctl cash:\n" + cash.output)
        #expect(try daemon.stop() == 0)
        print(
            "payout process test, after the restart:\n"
                + daemon.log.split(separator: "\n").filter {
                    $0.contains("payout") || $0.contains("change") || $0.contains("credit")
                }.joined(separator: "\n"))
    }
}
