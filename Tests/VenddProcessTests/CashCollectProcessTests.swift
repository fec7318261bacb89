import Foundation
import Testing
import VendControl
import VenddTestSupport

/// `vendctl cash collect` against a real `vendd --simulate`: refused outside service mode, the
/// machine's count per denomination of what went into the cash box (not the tubes), shown by
/// `status` and `cash`, and durable across a SIGKILL.
@Suite(.oneRealProcessTestAtATime) struct CashCollectProcessTests {
    @Test func coinsInTheCashBoxAreCollectedOnceInServiceMode() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.requireSuccess(daemon.vendctl("restock", "all"))
        for coin in ["500", "500", "500", "100"] { try daemon.requireSuccess(daemon.vendctl("sim", "coin", coin)) }
        try daemon.requireSuccess(daemon.vendctl("sim", "press", "A4"))
        _ = try daemon.waitUntil("the sale") { $0.books.itemsSold == 1 && $0.vendInProgress == nil }

        let refused = try daemon.vendctl("cash", "collect")
        #expect(refused.status == 1)
        #expect(
            refused.errors
                == "vendctl: a collection is made in service mode only: open the door or turn the service key (or vendctl service on), then vendctl cash collect\n"
        )
        #expect(try daemon.status().cashBox?.totalText == "1,600원")
        #expect(try daemon.vendctl("status").output.contains("\ncash box 1,600원 since vendd began counting (no collection yet)\n"))

        try daemon.requireSuccess(daemon.vendctl("service", "on"))
        let collected = try daemon.vendctl("cash", "collect")
        #expect(collected.status == 0, "\(collected.errors)")
        #expect(
            collected.output == """
                collection #1: the cash box took 1,600원 since vendd began counting (coin 100원 × 1, coin 500원 × 3); its count starts again from zero, the tubes stay
                cash box    count   amount
                coin 100원      1    100원
                coin 500원      3  1,500원
                total              1,600원

                """)
        try daemon.waitForLog("cash box collected (collection #1)")

        // Durable before the answer: a power cut right after changes nothing.
        daemon.signal(SIGKILL)
        _ = try daemon.waitForExit()
        try daemon.start()
        let box = try #require(try daemon.status().cashBox)
        #expect(box.collection == 1 && box.total == "0" && box.coins.isEmpty && box.since != nil)
        #expect(try daemon.status().books.coinsIn == "1600")
        let cash = try daemon.vendctl("cash")
        #expect(cash.normalisedOutput.contains("\ncash box 0원 since collection #1 (<time>)"), "\(cash.output)")

        // The next collection counts from the first.
        try daemon.requireSuccess(daemon.vendctl("service", "off"))
        try daemon.requireSuccess(daemon.vendctl("sim", "coin", "500"))
        try daemon.requireSuccess(daemon.vendctl("service", "on"))
        let second = try daemon.vendctl("cash", "collect", "--json")
        #expect(second.status == 0)
        let answer = try JSONDecoder().decode(ControlResponse.self, from: Data(second.output.utf8))
        #expect(answer.collection?.collection == 2)
        #expect(answer.collection?.since == box.since)
        #expect(answer.collection?.coins.map(\.count) == [1])
        #expect(answer.collection?.total == "500")
        #expect(try daemon.stop() == 0)
    }

    /// The sample machine's changer sends coins to its tubes while they have room: those stay,
    /// and only the stacked notes are collected.
    @Test func theTubesStayAndNotesAreCollected() throws {
        let daemon = try DaemonHarness(config: DaemonHarness.sampleMachine)
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.requireSuccess(daemon.vendctl("restock", "all"))
        let coin = try daemon.vendctl("sim", "coin", "500")
        #expect(coin.output.contains("into its tube"), "\(coin.output)")
        for note in ["1000", "5000"] { try daemon.requireSuccess(daemon.vendctl("sim", "note", note)) }
        try daemon.requireSuccess(daemon.vendctl("service", "on"))
        let tubesBefore = try daemon.status().payoutDevices
        let run = try daemon.vendctl("cash", "collect", "--json")
        #expect(run.status == 0, "\(run.errors)")
        let collection = try #require(try JSONDecoder().decode(ControlResponse.self, from: Data(run.output.utf8)).collection)
        #expect(collection.coins.isEmpty)
        #expect(collection.bills.map(\.value) == ["1000", "5000"])
        #expect(collection.bills.map(\.count) == [1, 1])
        #expect(collection.total == "6000")
        #expect(try daemon.status().payoutDevices == tubesBefore)
        #expect(try daemon.stop() == 0)
    }
}
