import CcTalkSimulator
import Foundation
import Testing
import VendControl
import VenddTestSupport

/// The real vendd paying change through its real ccTalk hopper driver, over a Unix socket to the
/// ccTalk simulator's hopper (100원 coins, address 3; its motor pays a coin per status poll).
@Suite(.oneRealProcessTestAtATime) struct CcTalkHopperProcessTests {
    @Test func changeIsPaidByTheCcTalkHopperAndAJamLeavesTheRestInCredit() throws {
        let sockets = try TemporaryDirectory()
        defer { sockets.remove() }
        let socketPath = sockets.path + "/hopper.sock"
        var hopperSettings = SimulatedHopperDevice.Settings()
        hopperSettings.coins = 30
        let simulator = try CcTalkSimulator(socketPath: socketPath, hopper: hopperSettings)
        let daemon = try DaemonHarness { sample in
            sample.replacingOccurrences(of: "  payout: none ", with: "  payout: change ")
                + "\npayout_devices:\n  - { type: cctalk-hopper, coin: 100, address: 3, port: \"unix:\(socketPath)\" }\n"
        }
        defer { daemon.tearDown() }
        try daemon.start()
        _ = try daemon.send(.restock(slot: "A1", count: nil))
        for _ in 0..<3 { _ = try daemon.send(.simCoin(amount: "500")) }
        _ = try daemon.send(.select(slot: "A1"))  // 1 500원 for 1 200원: three 100원 coins
        let paid = try daemon.waitUntil("the change to be paid") { $0.books.changePaid == "300" && $0.payoutInProgress == nil }
        #expect(simulator.hopperCoins == 27)
        #expect(simulator.hopperDispenseCommands == 1)
        #expect(paid.credit == "0")
        #expect(paid.payoutDevices?.first?.description.contains("ccTalk hopper at address 3") == true)

        // The hopper jams after one coin: 100원 paid, 200원 back to credit, nothing paid twice.
        simulator.jamHopper(after: 1)
        for _ in 0..<3 { _ = try daemon.send(.simCoin(amount: "500")) }
        _ = try daemon.send(.select(slot: "A1"))
        let jammed = try daemon.waitUntil("the jammed payout to end") { $0.books.changePaid == "400" && $0.payoutInProgress == nil }
        #expect(jammed.credit == "200")
        #expect(simulator.hopperCoins == 26)
        #expect(simulator.hopperDispenseCommands == 2)
        #expect(daemon.log.contains("went back to credit"))
        #expect(Int(jammed.books.coinsIn) == Int(jammed.books.sales)! + Int(jammed.books.changePaid ?? "")! + Int(jammed.credit)!)
        #expect(try daemon.stop() == 0)
    }
}
