import CcTalkSimulator
import Foundation
import Testing
import VendControl
import VendPOSIX
import VenddTestSupport

/// The real vendd and its ccTalk host against the simulated acceptor, through every fault the
/// simulator can inject: the books must show exactly the coins the acceptor took.
@Suite(.oneRealProcessTestAtATime) struct CoinAcceptorProcessTests {
    @Test func coinsAreCreditedOnceAndAcceptanceFollowsTheMachine() throws {
        let rig = try CoinAcceptorRig()
        defer { rig.tearDown() }
        try rig.daemon.start()
        try rig.waitForLog("ccTalk acceptor ready")
        // Nothing to sell yet: the acceptor stays inhibited, and refuses a coin.
        #expect(!rig.simulator.isAccepting)
        #expect(rig.simulator.insert(4) != .accepted)
        try rig.daemon.send(.restock(slot: "all", count: nil))
        try rig.waitUntilAccepting()
        #expect(rig.simulator.enabledPositions == [2, 3, 4])  // channel 1 is disabled in the file
        try rig.insert([2, 3, 4])
        let status = try rig.expectCoinsIn(650)
        #expect(status.credit == "650")
        #expect(status.coinAcceptor.hasPrefix("cctalk on unix:"))
        #expect(rig.daemon.log.contains("coin ids: 1=KR010A, 2=KR050A, 3=KR100A, 4=KR500A"))
        // Credit at the maximum (10,000): coins are refused. Five at a time: the device keeps
        // only its last five events between two polls.
        var total = 650
        for group in [[4, 4, 4, 4, 4], [4, 4, 4, 4, 4], [4, 4, 4, 4, 4], [4, 4, 4, 3, 3], [3, 2]] {
            try rig.insert(group)
            total += group.map { [2: 50, 3: 100, 4: 500][$0]! }.reduce(0, +)
            _ = try rig.daemon.waitUntil("coins in = \(total)") { $0.books.coinsIn == "\(total)" }
        }
        try rig.expectCoinsIn(10_000)
        #expect(rig.simulator.wait { !$0.isAccepting })
        try rig.daemon.send(.sim(.press(slot: "A4")))
        _ = try rig.daemon.waitUntil("the sale") { $0.books.itemsSold == 1 && $0.vendInProgress == nil }
        try rig.waitUntilAccepting()
        // Shutting down inhibits the acceptor.
        #expect(try rig.daemon.stop() == 0)
        #expect(rig.simulator.masterInhibitActive)
    }

    @Test(arguments: [WireFault.badChecksum, .garbage, .partial])
    func corruptRepliesLoseNoCoin(fault: WireFault) throws {
        let rig = try CoinAcceptorRig()
        defer { rig.tearDown() }
        try rig.startSelling()
        rig.simulator.setFault(fault)
        try rig.insert([4, 3, 2, 4])
        try rig.expectCoinsIn(1_150)
        rig.simulator.setFault(.none)
        try rig.insert([4])
        try rig.expectCoinsIn(1_650)
    }

    @Test func aSilentAcceptorIsReportedAndItsCoinsCreditedWhenItAnswers() throws {
        let rig = try CoinAcceptorRig()
        defer { rig.tearDown() }
        try rig.startSelling()
        rig.simulator.setFault(.silence)
        try rig.insert([4, 4])
        try rig.waitForLog("stopped answering polls")
        rig.simulator.setFault(.none)
        try rig.waitForLog("the acceptor answers again")
        try rig.expectCoinsIn(1_000)
        try rig.waitForLog("ccTalk acceptor ready", count: 2)
    }

    @Test func aResetAcceptorIsInitialisedAndEnabledAgain() throws {
        let rig = try CoinAcceptorRig()
        defer { rig.tearDown() }
        try rig.startSelling()
        try rig.insert([4])
        try rig.expectCoinsIn(500)
        rig.simulator.reset()
        try rig.waitForLog("was reset or lost power")
        try rig.waitUntilAccepting()
        try rig.insert([3, 4])
        try rig.expectCoinsIn(1_100)
    }

    @Test func moreThanFiveEventsBetweenPollsAreReportedNotInvented() throws {
        let rig = try CoinAcceptorRig()
        defer { rig.tearDown() }
        try rig.startSelling()
        rig.simulator.burst(4, count: 7)
        // The five the device still shows are credited; the two it forgot are logged, not made up.
        try rig.expectCoinsIn(2_500)
        try rig.waitForLog("LOST 2 coin event(s)")
    }

    @Test func eventsReleasedTwoPerPollAreAllCredited() throws {
        let rig = try CoinAcceptorRig()
        defer { rig.tearDown() }
        try rig.startSelling()
        rig.simulator.setReleasesTwoPerPoll(true)
        try rig.insert([4, 4, 3, 3, 2, 2, 4])
        try rig.expectCoinsIn(1_800)
    }

    @Test func unplugAndReplugAreSurvived() throws {
        let rig = try CoinAcceptorRig()
        defer { rig.tearDown() }
        try rig.startSelling()
        try rig.insert([4])
        try rig.expectCoinsIn(500)
        rig.simulator.unplug()
        try rig.waitForLog("acceptor.sock lost:")
        // The acceptor itself still has power: a coin goes into its buffer meanwhile.
        try rig.insert([3])
        try rig.simulator.replug()
        try rig.waitForLog("ccTalk acceptor ready", count: 2)
        try rig.expectCoinsIn(600)
        try rig.insert([4])
        try rig.expectCoinsIn(1_100)
    }

    @Test func aDifferentSerialNumberIsRefusedUntilRestart() throws {
        let rig = try CoinAcceptorRig()
        defer { rig.tearDown() }
        try rig.startSelling()
        try rig.insert([4])
        try rig.expectCoinsIn(500)
        // Another device answers (swapped, or an impersonator after an address change).
        rig.simulator.setSerialNumber(99_999)
        rig.simulator.reset()
        try rig.waitForLog("acceptor serial changed from 12345678 to 99999")
        #expect(!rig.simulator.isAccepting)
        rig.simulator.burst(4, count: 2)  // what it reports is not credited
        usleep(600_000)
        #expect(try rig.daemon.status().books.coinsIn == "500")
        // A restart takes the new device; what its buffer held before is not credited.
        #expect(try rig.daemon.stop() == 0)
        try rig.daemon.start()
        try rig.waitUntilAccepting()
        try rig.waitForLog("acceptor serial 99999 is new to this machine: its 2 earlier event(s) are not credited")
        try rig.insert([3])
        try rig.expectCoinsIn(600)
    }

    @Test func aCoinAcceptedBeforeTheNextPollIsCreditedOnceAfterSIGKILL() throws {
        let rig = try CoinAcceptorRig()
        defer { rig.tearDown() }
        try rig.startSelling()
        // No poll reaches the device, so vendd cannot have seen the coin when it dies.
        rig.simulator.setFault(.silence)
        let polls = rig.simulator.pollCount
        try rig.insert([4])
        rig.daemon.signal(SIGKILL)
        _ = try rig.daemon.waitForExit()
        #expect(rig.simulator.pollCount == polls)
        rig.simulator.setFault(.none)
        try rig.daemon.start()
        try rig.expectCoinsIn(500)
        // Killed right after crediting: the restart must not credit it again.
        try rig.insert([3])
        try rig.expectCoinsIn(600)
        rig.daemon.signal(SIGKILL)
        _ = try rig.daemon.waitForExit()
        try rig.daemon.start()
        try rig.waitUntilAccepting()
        try rig.expectCoinsIn(600)
    }

    @Test func anEchoingBusIsVerified() throws {
        let rig = try CoinAcceptorRig(simulatorEcho: true) {
            $0.replacingOccurrences(of: "echo: false ", with: "echo: true  ")
        }
        defer { rig.tearDown() }
        try rig.startSelling()
        try rig.insert([4, 2])
        try rig.expectCoinsIn(550)
    }

    @Test func anEchoThatNeverComesIsReported() throws {
        let rig = try CoinAcceptorRig {
            $0.replacingOccurrences(of: "echo: false ", with: "echo: true  ")
        }
        defer { rig.tearDown() }
        try rig.daemon.start()
        try rig.waitForLog("no echo of the 5 bytes sent")
    }
}

/// The one-byte protocol over a Unix socket: each byte is a channel.
@Suite(.oneRealProcessTestAtATime) struct ByteCodeProcessTests {
    @Test func eachByteIsAChannelAndUnknownBytesAreIgnored() throws {
        let socketDirectory = try TemporaryDirectory()
        defer { socketDirectory.remove() }
        let socketPath = socketDirectory.path + "/acceptor.sock"
        let listener = try UnixSocket.listen(at: socketPath, mode: 0o600)
        let daemon = try DaemonHarness { sample in
            sample.replacingOccurrences(
                of: "port: /dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A10KQ1XZ-if00-port0\n  protocol: cctalk\n",
                with: "port: unix:\(socketPath)\n  protocol: bytecode\n"
            )
            .replacingOccurrences(of: "  cctalk:\n    address: 2 ", with: "  #cctalk:\n    #address: 2 ")
            .replacingOccurrences(of: "    checksum: simple-8\n    echo: false ", with: "    #checksum: simple-8\n    #echo: false ")
            .replacingOccurrences(of: "    poll_interval_ms: 200\n", with: "    #poll_interval_ms: 200\n")
        }
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        let acceptor = try #require(listener.accept())
        try acceptor.write(String(decoding: [4, 3, 99, 2] as [UInt8], as: UTF8.self))
        _ = try daemon.waitUntil("coins in = 650") { $0.books.coinsIn == "650" }
        try daemon.waitForLog("byte 99 from the acceptor is not a channel in coin_acceptor.channels: ignored")
        usleep(300_000)
        #expect(try daemon.status().books.coinsIn == "650")
    }
}
