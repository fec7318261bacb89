import Foundation
import MDBSocketSimulator
import SimulatedMDB
import Testing
import VendControl
import VenddTestSupport

/// The real vendd with its MDB master on the Qibixx line API, against the simulated interface
/// (changer with tubes, bill validator with escrow) on a Unix socket: the sample configuration
/// with the coin acceptor replaced by an `mdb:` section and `payout: change`.
@Suite(.oneRealProcessTestAtATime) struct MDBProcessTests {
    final class Rig: @unchecked Sendable {
        // @unchecked: used from one test at a time.
        let socketDirectory: TemporaryDirectory
        let simulator: MDBSocketSimulator
        let daemon: DaemonHarness

        /// The MDB devices of the sample machine: a changer and a bill validator.
        static let changerAndValidator = """
              changer:
                coins:
                  - { type: 0, value: 10 }
                  - { type: 1, value: 50 }
                  - { type: 2, value: 100 }
                  - { type: 3, value: 500 }
              bill_validator:
                bills:
                  - { type: 0, value: 1000 }
                  - { type: 1, value: 5000 }
                  - { type: 2, value: 10000 }
                  - { type: 3, value: 50000, high_security: true }

            """

        /// `devices`: the `mdb:` section's device entries, indented as in the file; `readers`: the
        /// card readers on the simulated interface besides its changer and validator (when listed).
        init(devices: String = changerAndValidator, readers: [SimulatedCashlessReader] = []) throws {
            socketDirectory = try TemporaryDirectory()
            let socketPath = socketDirectory.path + "/mdb.sock"
            simulator = try MDBSocketSimulator(
                socketPath: socketPath, changer: devices.contains("changer:"), billValidator: devices.contains("bill_validator:"),
                readers: readers)
            simulator.with { $0.changer.tubes[0...3] = [20, 20, 20, 20] }
            daemon = try DaemonHarness { sample in
                let start = sample.range(of: "coin_acceptor:")!.lowerBound
                let end = sample.range(of: "    - { channel: 4, value: 500 }\n")!.upperBound
                return sample.replacingCharacters(
                    in: start..<end,
                    with: """
                        mdb:
                          port: unix:\(socketPath)
                          currency_code: 410

                        """ + devices
                ).replacingOccurrences(of: "  payout: none ", with: devices.contains("changer:") ? "  payout: change " : "  payout: none ")
            }
        }

        func startSelling() throws {
            try daemon.start()
            try daemon.send(.restock(slot: "all", count: nil))
            guard simulator.wait(until: { $0.changer.acceptMask == [0, 1, 2, 3] && $0.bills.acceptMask == [0, 1, 2, 3] }) else {
                throw HarnessError("vendd never enabled the MDB devices; log:\n\(daemon.allLogs)")
            }
        }

        /// What the simulated devices took, in won: what the books must show, once each.
        var taken: (coins: Int, bills: Int, paid: Int) {
            simulator.with { devices in
                let changer = devices.changer, bills = devices.bills
                let coins: Int = changer.coinsTaken.map { changer.value(ofType: $0) }.reduce(0, +)
                let notes: Int = bills.stacked.map { Int(bills.setup.value(ofType: $0) ?? 0) }.reduce(0, +)
                let paid: Int = changer.coinsPaid.map { changer.value(ofType: $0) }.reduce(0, +)
                return (coins, notes, paid)
            }
        }

        func tearDown() {
            daemon.tearDown()
            simulator.unplug()
            socketDirectory.remove()
        }
    }

    @Test func aPurchasePaidWithANoteGetsItsChangeFromTheChanger() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        try rig.startSelling()
        // The tubes reported at the changer's initialisation reach the machine: change is possible.
        _ = try rig.daemon.waitUntil("the changer's tubes known") { $0.exactChangeOnly == false }
        rig.simulator.with { $0.bills.insert(type: 1) }
        _ = try rig.daemon.waitUntil("the note credited") { $0.books.billsIn == "5000" && $0.credit == "5000" }
        try rig.daemon.send(.sim(.press(slot: "A1")))  // 1,200 won
        let status = try rig.daemon.waitUntil("the sale and its change") {
            $0.books.itemsSold == 1 && $0.books.changePaid == "3800" && $0.credit == "0"
        }
        #expect(status.books.coinsIn == "0")
        #expect(status.billStacker == StatusReport.Stacker(bills: 1, capacity: 400, full: false))
        #expect(try rig.daemon.vendctl("status").output.contains("bills    stacker 1/400\n"))
        #expect(rig.taken.paid == 3800)
        #expect(rig.simulator.with { $0.bills.stacked } == [1])
        #expect(rig.simulator.with { $0.bills.highSecurity } == [3], "SECURITY sent from the table's high_security")
        try rig.daemon.waitForLog("bill validator (30h) ready")
        #expect(try rig.daemon.stop() == 0)
        #expect(rig.simulator.with { $0.changer.acceptMask.isEmpty && $0.bills.acceptMask.isEmpty }, "stopping refuses coins and bills")
    }

    /// The technician's day at the changer: fill the tubes (float, not credit), test a payout
    /// through the real vendctl, pay a coin with the changer's own button; the books and the DEX
    /// audit keep each apart from the customers' money.
    @Test func fillModeAndAPayoutTestKeepTheTechniciansCoinsApart() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        try rig.startSelling()
        _ = try rig.daemon.waitUntil("the changer's tubes known") { $0.exactChangeOnly == false }
        let refused = try rig.daemon.vendctl("cash", "fill", "on")
        #expect(refused.status == 1 && refused.errors.contains("only in service mode"), "\(refused.errors)")

        try rig.daemon.send(.service(on: true))
        #expect(rig.simulator.wait { $0.changer.acceptMask.isEmpty }, "service mode takes no coins")
        try rig.daemon.requireSuccess(rig.daemon.vendctl("cash", "fill", "on"))
        #expect(rig.simulator.wait { $0.changer.acceptMask == [0, 1, 2, 3] }, "fill mode takes coins")
        rig.simulator.with {
            $0.changer.insert(type: 3)
            $0.changer.insert(type: 3)
            $0.changer.insert(type: 2)
        }
        let filled = try rig.daemon.waitUntil("the float booked") { $0.payoutDevices?.first?.coins.last?.count == 22 }
        #expect(filled.fillMode == true)
        #expect(filled.credit == "0" && filled.books.coinsIn == "0")
        try rig.daemon.requireSuccess(rig.daemon.vendctl("cash", "fill", "off"))
        #expect(rig.simulator.wait { $0.changer.acceptMask.isEmpty })

        let test = try rig.daemon.vendctl("cash", "payout-test", "600")
        try rig.daemon.requireSuccess(test)
        #expect(test.output.contains("(payout test)") && test.output.contains("paid 600원"), "\(test.output)")
        #expect(rig.taken.paid == 600)
        rig.simulator.with { $0.changer.manualDispense(type: 2, count: 1) }
        // Twice: the changer's notice (sent before the machine hears of it), then the machine's
        // event, once applied (queries read the state published after each input).
        try rig.daemon.waitForLog("paid out by the changer's own buttons", count: 2)

        let details = try #require(try rig.daemon.send(.coins).coins?.details)
        let figures = Dictionary(uniqueKeysWithValues: details.map { ($0.item, $0.amount) })
        #expect(figures["float-filled"] == "1100")
        #expect(figures["test-payouts"] == "600")
        #expect(figures["manually-dispensed"] == "100")
        let status = try rig.daemon.status()
        #expect(status.credit == "0" && status.books.coinsIn == "0" && status.books.changePaid == "0")
        let audit = try rig.daemon.vendctl("audit", "--dex", rig.daemon.directory.path + "/audit.dex")
        try rig.daemon.requireSuccess(audit)
        let dex = try String(contentsOfFile: rig.daemon.directory.path + "/audit.dex", encoding: .utf8)
        #expect(dex.contains("\r\nCA4*0*700*0*700\r\n") && dex.contains("\r\nCA10*1100*1100\r\n"), "\(dex)")
        #expect(try rig.daemon.stop() == 0)
    }

    /// `cash payout-test 15` on a machine whose smallest coin is 10원, or more than the tubes hold
    /// without --yes, is asked again before anything is paid.
    @Test func aPayoutTestTheCoinsCannotMakeOrThatWouldEmptyTheTubesIsRefused() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        try rig.startSelling()
        _ = try rig.daemon.waitUntil("the changer's tubes known") { $0.exactChangeOnly == false }
        try rig.daemon.send(.service(on: true))
        let odd = try rig.daemon.vendctl("cash", "payout-test", "15")
        #expect(odd.status == 64)
        #expect(
            odd.errors
                == "vendctl: the payout devices cannot pay 15원: their coins (10원, 50원, 100원, 500원) pay multiples of 10원; try 10원 or 20원\n")
        let all = try rig.daemon.vendctl("cash", "payout-test", "100000")
        #expect(all.status == 64)
        #expect(
            all.errors
                == "vendctl: the payout devices hold 13,200원: a test of 100,000원 would empty them. Add --yes to pay what they hold, or ask for less\n"
        )
        #expect(rig.taken.paid == 0, "nothing was paid")
        #expect(try rig.daemon.status().health?.coinAcceptor.ok == true)
    }

    @Test func throughFaultsEveryCoinAndBillTakenIsCreditedOnce() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        try rig.startSelling()
        rig.simulator.with {
            $0.changer.insert(type: 3)
            $0.changer.insert(type: 2)
            $0.bills.insert(type: 0)
        }
        _ = try rig.daemon.waitUntil("first money") { $0.credit == "1600" }
        // More than the maximum credit (10,000): the note is returned from escrow, not credited.
        rig.simulator.with { $0.bills.insert(type: 3) }
        #expect(rig.simulator.wait { $0.bills.returned == [3] })
        // The changer resets itself mid-session; the validator goes silent for a while.
        rig.simulator.with { $0.changer.resetItself() }
        #expect(rig.simulator.wait { $0.changer.acceptMask == [0, 1, 2, 3] })
        rig.simulator.with { $0.changer.insert(type: 1) }
        // Reported before the unplug: a bus reset wipes what a changer has not yet reported.
        _ = try rig.daemon.waitUntil("the coin after the reset") { $0.credit == "1650" }
        // The interface is unplugged and comes back.
        rig.simulator.unplug()
        try rig.daemon.waitForLog("MDB interface on unix:", timeout: 15)
        try rig.simulator.replug()
        // Money only once vendd has reset the bus again (a reset wipes what a device holds) and
        // initialised both devices after it (the masks the reset cleared are set again).
        try rig.daemon.waitForLog("MDB interface ready on", count: 2, timeout: 15)
        #expect(
            rig.simulator.wait(timeout: .seconds(15)) {
                $0.masterMode && $0.changer.acceptMask == [0, 1, 2, 3] && $0.bills.acceptMask == [0, 1, 2, 3]
            })
        rig.simulator.with {
            $0.changer.insert(type: 3)
            $0.bills.insert(type: 1)
        }
        let status = try rig.daemon.waitUntil("everything credited", timeout: 20) { $0.credit == "7150" }
        let taken = rig.taken
        #expect(status.books.coinsIn == "\(taken.coins)")
        #expect(status.books.billsIn == "\(taken.bills)")
        #expect(taken.coins + taken.bills == 7150)
        usleep(500_000)
        #expect(try rig.daemon.status().credit == "7150", "nothing credited twice")
        #expect(try rig.daemon.stop() == 0)
    }
}
