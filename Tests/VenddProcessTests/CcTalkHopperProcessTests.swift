import CcTalkSimulator
import Foundation
import Testing
import VendControl
import VenddTestSupport

/// Where the ccTalk hopper (100원 coins, address 3) is: on a port of its own (the coin acceptor
/// simulated in memory, coins by `vendctl sim coin`), or on the ccTalk coin acceptor's bus (no
/// `port`: one socket, the acceptor at address 2 and the hopper at 3, coins inserted into the
/// simulated acceptor).
enum HopperBus: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case ownPort = "own port"
    case acceptorsBus = "coin acceptor's bus"
    var testDescription: String { rawValue }
}

/// The real vendd and its real ccTalk hopper driver, over a Unix socket to the ccTalk simulator
/// (its hopper's motor turns once per status read, a coin every `turnsPerCoin` turns).
final class HopperRig: @unchecked Sendable {
    // @unchecked: used from one test at a time.
    let bus: HopperBus
    let sockets: TemporaryDirectory
    let simulator: CcTalkSimulator
    let daemon: DaemonHarness

    init(_ bus: HopperBus, coins: Int = 60, turnsPerCoin: Int = 1, encrypted: Bool = false, lowLevelTrigger: Int? = nil) throws {
        self.bus = bus
        sockets = try TemporaryDirectory()
        let socketPath = sockets.path + "/cctalk.sock"
        var hopper = SimulatedHopperDevice.Settings()
        hopper.coins = coins
        hopper.turnsPerCoin = turnsPerCoin
        hopper.encrypted = encrypted
        hopper.lowLevelTrigger = lowLevelTrigger
        simulator = try CcTalkSimulator(socketPath: socketPath, hopper: hopper)
        daemon = try DaemonHarness { sample in
            let selling = sample.replacingOccurrences(of: "  payout: none ", with: "  payout: change ")
            switch bus {
            case .ownPort:
                return selling + "\npayout_devices:\n  - { type: cctalk-hopper, coin: 100, address: 3, port: \"unix:\(socketPath)\" }\n"
            case .acceptorsBus:
                return selling.replacingOccurrences(
                    of: "port: /dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A10KQ1XZ-if00-port0",
                    with: "port: unix:\(socketPath)")
                    + "\npayout_devices:\n  - { type: cctalk-hopper, coin: 100, address: 3 }\n"
            }
        }
    }

    /// vendd running with A1 stocked (and, on the acceptor's bus, the acceptor enabled).
    func startSelling() throws {
        try daemon.start()
        _ = try daemon.send(.restock(slot: "A1", count: nil))
        try waitUntilAcceptorAccepts()
    }

    func waitUntilAcceptorAccepts() throws {
        guard bus == .acceptorsBus else { return }
        guard simulator.wait(until: { $0.isAccepting }) else {
            throw HarnessError("vendd never enabled the acceptor; simulator: \(simulator.status); log:\n\(daemon.allLogs)")
        }
    }

    /// `count` 500원 coins into the machine, and into its books: one at a time, each credited
    /// before the next (the acceptor keeps only its last 5 events between two polls).
    func insert500(_ count: Int) throws {
        let before = Int(try daemon.status().books.coinsIn) ?? 0
        for inserted in 1...count {
            switch bus {
            case .ownPort: _ = try daemon.send(.sim(.coin(amount: "500")))
            case .acceptorsBus:
                // Position 4 is 500원 in the sample's channel table.
                guard simulator.insert(4) == .accepted else { throw HarnessError("the acceptor returned a 500원 coin") }
            }
            _ = try daemon.waitUntil("coin \(inserted) of 500원 in the books") { $0.books.coinsIn == "\(before + 500 * inserted)" }
        }
    }

    /// 원 the hopper has paid since the test began, from the simulator's own count.
    var paidByHopper: Int { 100 * (60 - (simulator.hopperCoins ?? 60)) }

    func tearDown() {
        daemon.tearDown()
        simulator.unplug()
        sockets.remove()
    }

    static func won(_ text: String?) -> Int { Int(text ?? "") ?? -1 }

    /// coins in = sales + change + refunds + credit.
    static func booksBalance(_ status: StatusReport) -> Bool {
        won(status.books.coinsIn) == won(status.books.sales) + won(status.books.changePaid) + won(status.books.refunds) + won(status.credit)
    }
}

@Suite(.oneRealProcessTestAtATime) struct CcTalkHopperProcessTests {
    func won(_ text: String?) -> Int { HopperRig.won(text) }
    func booksBalance(_ status: StatusReport) -> Bool { HopperRig.booksBalance(status) }

    @Test func changeIsPaidByTheCcTalkHopperAndAJamLeavesTheRestInCredit() throws {
        let rig = try HopperRig(.ownPort, coins: 30)
        defer { rig.tearDown() }
        let (daemon, simulator) = (rig.daemon, rig.simulator)
        try rig.startSelling()
        try rig.insert500(3)
        _ = try daemon.send(.select(slot: "A1"))  // 1 500원 for 1 200원: three 100원 coins
        let paid = try daemon.waitUntil("the change to be paid") { $0.books.changePaid == "300" && $0.payoutInProgress == nil }
        #expect(simulator.hopperCoins == 27)
        #expect(simulator.hopperDispenseCommands == 1)
        #expect(paid.credit == "0")
        #expect(paid.payoutDevices?.first?.description.contains("ccTalk hopper at address 3") == true)

        // The hopper jams after one coin: 100원 paid, 200원 back to credit, nothing paid twice.
        simulator.jamHopper(after: 1)
        try rig.insert500(3)
        _ = try daemon.send(.select(slot: "A1"))
        let jammed = try daemon.waitUntil("the jammed payout to end") { $0.books.changePaid == "400" && $0.payoutInProgress == nil }
        #expect(jammed.credit == "200")
        #expect(simulator.hopperCoins == 26)
        #expect(simulator.hopperDispenseCommands == 2)
        #expect(daemon.log.contains("went back to credit"))
        #expect(booksBalance(jammed))
        #expect(try daemon.stop() == 0)
    }

    /// One socket, one owner: the acceptor keeps its poll interval while the hopper pays (the
    /// hopper's status reads go between its polls), follows the inhibit during the payout,
    /// credits coins after it; an unplug is logged once and both devices work after the replug;
    /// at stop the hopper still gets its emergency stop.
    @Test func onTheAcceptorsBusChangeIsPaidWhileTheAcceptorIsPolled() throws {
        let rig = try HopperRig(.acceptorsBus, turnsPerCoin: 5)  // 500 ms a coin
        defer { rig.tearDown() }
        let (daemon, simulator) = (rig.daemon, rig.simulator)
        try rig.startSelling()
        let hopper = try daemon.status().payoutDevices?.first?.description ?? ""
        #expect(hopper.contains("ccTalk hopper at address 3 on unix:"), "the hopper, identified at start: \(hopper)")
        try rig.insert500(3)
        _ = try daemon.send(.select(slot: "A1"))  // 300원 of change: three coins, about 1.5 s
        guard simulator.wait(until: { $0.hopperDispenseCommands == 1 }) else {
            throw HarnessError("the hopper was never told to pay; log:\n\(daemon.allLogs)")
        }
        let started = (polls: simulator.pollCount, at: ContinuousClock.now)
        #expect(simulator.wait(until: { !$0.isAccepting }), "coins are inhibited while change is paid")
        #expect(simulator.insert(4) != .accepted, "a coin inserted while change is paid is returned")
        let paid = try daemon.waitUntil("the change to be paid") { $0.books.changePaid == "300" && $0.payoutInProgress == nil }
        let elapsed = ContinuousClock.now - started.at
        let polls = simulator.pollCount - started.polls
        let expected = Int(elapsed / .milliseconds(200))  // the sample's poll_interval_ms
        #expect(polls * 2 >= expected && expected >= 5, "\(polls) acceptor polls in \(elapsed) of payout (\(expected) at the interval)")
        #expect(paid.credit == "0" && rig.paidByHopper == 300)
        print("hopper on the acceptor's bus: \(polls) acceptor polls during \(elapsed) of payout (\(expected) at 200 ms)")

        try rig.waitUntilAcceptorAccepts()
        try rig.insert500(1)  // credited after the payout, once
        #expect(try daemon.status().credit == "500")

        simulator.unplug()
        try daemon.waitForLog("cctalk.sock lost:")
        try simulator.replug()
        try daemon.waitForLog("ccTalk acceptor ready", count: 2)
        try rig.insert500(2)
        _ = try daemon.send(.select(slot: "A1"))  // 1 500원 for 1 200원 again
        let again = try daemon.waitUntil("the change after the replug") { $0.books.changePaid == "600" && $0.payoutInProgress == nil }
        #expect(again.credit == "0" && rig.paidByHopper == 600 && simulator.hopperDispenseCommands == 2)
        #expect(booksBalance(again))
        #expect(daemon.log.components(separatedBy: "cctalk.sock lost:").count - 1 == 1, "the link's loss is logged once")

        #expect(try daemon.stop() == 0)
        #expect(simulator.hopperEmergencyStops == 1, "the hopper is stopped at shutdown, on the acceptor's link")
    }

    /// The hopper on the acceptor's bus is identified at start: one that wants encrypted
    /// dispense commands stops vendd, naming the entry and what to do.
    @Test func anEncryptedHopperOnTheAcceptorsBusStopsTheStart() throws {
        let rig = try HopperRig(.acceptorsBus, encrypted: true)
        defer { rig.tearDown() }
        try rig.daemon.start()
        #expect(try rig.daemon.waitForExit() != 0)
        let log = rig.daemon.log
        #expect(
            log.contains("payout_devices") && log.contains("the ccTalk hopper at address 3 on unix:")
                && log.contains("wants encrypted dispense commands"), "\(log)")
        #expect(rig.simulator.hopperDispenseCommands == 0)
    }

    /// SIGKILL while the real driver's hopper pays 2 800원 (a coin every 300 ms): after the
    /// restart the hopper, still mid-payout, is stopped and read; the books take what it says
    /// it paid, the rest is credit, and no second dispense command ever reaches it.
    @Test(arguments: HopperBus.allCases)
    func killedMidPayoutTheHopperIsNeverToldTwiceAndTheBooksBalance(_ bus: HopperBus) throws {
        let rig = try HopperRig(bus, turnsPerCoin: 3)
        defer { rig.tearDown() }
        let (daemon, simulator) = (rig.daemon, rig.simulator)
        try rig.startSelling()
        try rig.insert500(8)
        _ = try daemon.send(.select(slot: "A1"))  // 1 200원 of 4 000원: 28 coins of change
        guard simulator.wait(until: { ($0.hopperCoins ?? 60) <= 57 }) else {
            throw HarnessError("the hopper never started paying; log:\n\(daemon.allLogs)")
        }
        daemon.signal(SIGKILL)
        _ = try daemon.waitForExit()
        #expect(rig.paidByHopper < 2_800, "the kill landed after the payout")

        try daemon.start()
        let restarted = try daemon.waitUntil("the interrupted payout to be resolved") { $0.payoutInProgress == nil }
        let paid = rig.paidByHopper
        #expect(paid >= 300 && paid < 2_800, "\(paid)원 paid")
        print("hopper (\(bus.rawValue)): killed mid-payout, \(paid)원 of 2,800원 paid, \(restarted.credit)원 back in credit")
        #expect(simulator.hopperDispenseCommands == 1)
        #expect(won(restarted.books.changePaid) == paid, "the books say \(restarted.books.changePaid ?? "-"), the hopper paid \(paid)")
        #expect(won(restarted.books.unknownPayouts) == 0)
        #expect(won(restarted.credit) == 2_800 - paid)
        #expect(booksBalance(restarted))
        // Logged on the notices' thread, possibly after the status answer.
        try daemon.waitForLog("was in flight when vendd stopped")

        // The machine sells on: a coin is credited, and coin return pays the rest, once.
        try rig.waitUntilAcceptorAccepts()
        try rig.insert500(1)
        _ = try daemon.send(.coinReturn)
        let settled = try daemon.waitUntil("the rest to be paid", timeout: 30) { $0.payoutInProgress == nil && $0.credit == "0" }
        #expect(rig.paidByHopper == 3_300)
        #expect(simulator.hopperDispenseCommands == 2)
        #expect(won(settled.books.changePaid) + won(settled.books.refunds) == 3_300)
        #expect(booksBalance(settled))
        let cash = try daemon.vendctl("cash")
        #expect(cash.status == 0 && cash.output.contains("unknown payouts       0원"), "\(cash.output)")
        #expect(try daemon.stop() == 0)
    }

    /// The hopper's low level sensor (header 217), triggered below 10 coins: the change of one
    /// sale takes it from 12 to 9 coins, and the machine says EXACT CHANGE ONLY as the payout
    /// ends; coins put in by hand clear it at the driver's next idle level read (every 5 s).
    @Test(arguments: HopperBus.allCases)
    func belowItsLowLevelSensorTheHopperMakesItExactChangeOnlyUntilRefilled(_ bus: HopperBus) throws {
        let rig = try HopperRig(bus, coins: 12, lowLevelTrigger: 10)
        defer { rig.tearDown() }
        let (daemon, simulator) = (rig.daemon, rig.simulator)
        try rig.startSelling()
        let start = try daemon.status()
        #expect(start.exactChangeOnly == false)
        #expect(start.payoutDevices?.first?.coins.first?.level == "ok" && start.payoutDevices?.first?.coins.first?.count == nil)

        try rig.insert500(3)
        _ = try daemon.send(.select(slot: "A1"))  // 1 500원 for 1 200원: three 100원 coins
        let low = try daemon.waitUntil("exact change only after the change is paid") {
            $0.exactChangeOnly == true && $0.payoutInProgress == nil
        }
        #expect(simulator.hopperCoins == 9 && low.books.changePaid == "300")
        #expect(low.payoutDevices?.first?.coins.first?.level == "low")
        let text = try daemon.vendctl("status")
        #expect(text.output.contains("EXACT CHANGE ONLY") && text.output.contains("? × 100원 (level low)"), "\(text.output)")
        let json = try daemon.vendctl("--json", "status").output
        #expect(json.contains(#""level":"low""#), "\(json)")
        #expect(try DocumentedSchemas().violations(of: "status", in: json) == [])
        let report = try daemon.vendctl("--json", "report").output
        #expect(report.contains(#""cash":{"#) && !report.contains("tubeContents"), "a level is no count: \(report)")

        simulator.refillHopper(20)
        let refilled = try daemon.waitUntil("the refill to be seen", timeout: 20) { $0.exactChangeOnly == false }
        #expect(refilled.payoutDevices?.first?.coins.first?.level == "ok")
        #expect(!(try daemon.vendctl("status").output.contains("EXACT CHANGE ONLY")))
        #expect(try daemon.stop() == 0)
    }
}
