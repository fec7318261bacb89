import Foundation
import Testing
import VendControl
import VenddTestSupport

/// The README's first command's machine: the real vendd with the shipped sample configuration
/// unchanged, its MDB changer, bill validator and card reader simulated in-process, driven only
/// through `vendctl` as a new user would.
@Suite(.oneRealProcessTestAtATime) struct SampleMachineProcessTests {
    static func startSampleMachine() throws -> DaemonHarness {
        let daemon = try DaemonHarness(config: DaemonHarness.sampleMachine)
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        _ = try daemon.waitUntil("the card reader ready") { $0.cardReaders?.first?.ready == true }
        return daemon
    }

    /// Coins and a note in, a cash sale with change out of the tubes, a card sale selection
    /// first and one card first, a declined card: each in the books where it belongs.
    @Test func takesCoinsNotesAndCardsAndGivesChange() throws {
        let daemon = try Self.startSampleMachine()
        defer { daemon.tearDown() }
        #expect(try daemon.vendctl("sim", "coin", "500").output == "coin of 500원 accepted by the coin changer (into its tube)\n")
        #expect(try daemon.vendctl("sim", "note", "1000").output == "note of 1,000원 stacked\n")
        #expect(try daemon.status().credit == "1500")
        let wrong = try daemon.vendctl("sim", "coin", "1000")
        #expect(wrong.status == 64 && wrong.errors.contains("it is a note: vendctl sim note 1000"), "\(wrong.errors)")

        // A1 costs 1,200원: 300원 of change leaves the changer's tubes.
        try daemon.send(.sim(.press(slot: "A1")))
        let paid = try daemon.waitUntil("the change paid") { $0.books.changePaid == "300" && $0.payoutInProgress == nil }
        #expect(paid.credit == "0" && paid.books.sales == "1200" && paid.books.billsIn == "1000")
        let tubes = paid.payoutDevices?.first?.coins.map { "\($0.valueText)×\($0.count ?? -1)" } ?? []
        #expect(tubes == ["10원×20", "50원×20", "100원×17", "500원×21"], "300원 as three 100원 coins; the 500원 went into its tube: \(tubes)")

        // Selection first, with a slow bank: the status says the vend waits for approval.
        #expect(try daemon.vendctl("sim", "card", "slow", "15").status == 0)
        try daemon.send(.sim(.press(slot: "A4")))
        let waiting = try daemon.waitUntil("the approval wait") { $0.cardVendAwaitingApproval == true }
        #expect(waiting.vendInProgress != nil)
        _ = try daemon.waitUntil("the card sale") { $0.books.cardSales?["cashless1"] == "1500" && $0.vendInProgress == nil }

        // Card first: tap with 3,000원 of funds, then choose. The sale is booked as the item
        // drops; the reader is told VEND SUCCESS on the bus's next turn, and takes no card before.
        try daemon.waitForLog("cashless #1 told VEND SUCCESS")
        _ = try daemon.waitUntil("the reader free again") { $0.cardSession == nil && $0.cardReaders?.first?.ready == true }
        #expect(try daemon.vendctl("sim", "card", "tap", "3000").output == "a card on cashless #1 with 3,000원 of funds\n")
        _ = try daemon.waitUntil("the card session") { $0.cardSession != nil }
        try daemon.send(.sim(.press(slot: "B2")))
        let cards = try daemon.waitUntil("the second card sale") { $0.books.cardSales?["cashless1"] == "2500" && $0.cardSession == nil }
        #expect(cards.books.sales == "1200", "card money stays out of the cash books")

        // The bank declines: nothing charged, nothing dropped.
        #expect(try daemon.vendctl("sim", "card", "deny").status == 0)
        try daemon.send(.sim(.press(slot: "A3")))
        try daemon.waitForLog("denied by cashless #1: nothing charged, nothing dispensed")
        let after = try daemon.waitUntil("the denied vend over") { $0.vendInProgress == nil }
        #expect(after.books.cardSales?["cashless1"] == "2500" && after.slot("A3")?.stock == 8)

        let history = try #require(try daemon.send(.history(since: nil, limit: nil)).history?.sales)
        #expect(history.map { "\($0.slot) \($0.payment ?? "?")" } == ["A1 cash", "A4 cashless1", "B2 cashless1"])
        let table = try daemon.vendctl("history").normalisedOutput
        #expect(table.contains("Canned Coffee  1,000원  cashless1  drop-sensor"), "\(table)")
    }

    /// A restart finds the changer's tubes as they were, and a card vend that vendd was killed in
    /// while waiting for the bank is never sold. The simulated reader runs inside vendd, so it
    /// restarts with it (JUST RESET): whether it had approved cannot be told, and the price is
    /// booked possibly charged, nothing dispensed.
    @Test func aRestartKeepsTheTubesAndSettlesTheCardVendInFlight() throws {
        let daemon = try Self.startSampleMachine()
        defer { daemon.tearDown() }
        try daemon.vendctl("sim", "coin", "500")
        try daemon.send(.sim(.press(slot: "A3")))  // 1,000원 with 500 of credit: refused
        try daemon.vendctl("sim", "note", "1000")
        try daemon.send(.sim(.press(slot: "A3")))
        _ = try daemon.waitUntil("the change paid") { $0.books.changePaid == "500" && $0.payoutInProgress == nil }
        try daemon.vendctl("sim", "card", "slow", "200")
        try daemon.send(.sim(.press(slot: "A4")))
        _ = try daemon.waitUntil("the approval wait") { $0.cardVendAwaitingApproval == true }
        daemon.signal(SIGKILL)
        _ = try daemon.waitForExit()

        try daemon.start()
        let restarted = try daemon.waitUntil("the card vend settled and the reader back") {
            $0.vendInProgress == nil && $0.cardReaders?.first?.ready == true
        }
        #expect(restarted.books.cardSales == nil, "nothing sold: \(restarted.books)")
        #expect(restarted.books.cardPossiblyCharged == ["cashless1": "1500"], "\(restarted.books)")
        #expect(restarted.slot("A4")?.stock == 10, "nothing dropped")
        let tubes = restarted.payoutDevices?.first?.coins.map { $0.count ?? -1 } ?? []
        #expect(tubes == [20, 20, 20, 20], "500원 in and 500원 of change out: the tubes as they were (\(tubes))")
        try daemon.vendctl("sim", "coin", "500")
        #expect(try daemon.status().credit == "500")

        // In service mode the reader takes no card: the tap is refused, not reported as done.
        try daemon.requireSuccess(daemon.vendctl("service", "on"))
        let refused = try daemon.vendctl("sim", "card", "tap")
        #expect(refused.status == 1 && refused.errors.contains("is not taking cards now"), "\(refused.output) \(refused.errors)")
    }
}
