import CcTalk
import CcTalkSimulator
import Foundation
import Synchronization
import Testing
import VendConfig
import VendPOSIX
import VendSerial
import VendSettings
import VendTime
import VendingCore

@testable import VendDrivers
@testable import VendHardware

/// A coin acceptor (address 2) and a hopper (address 3) on one `CcTalkLink`, over a real Unix
/// socket to the ccTalk simulator serving both. No test sleeps: the hopper's status interval is
/// a closure here, and the threads below only wait for each other.
@Suite(.serialized) struct CcTalkLinkTests {
    let path = "/tmp/vendd-link-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
    let simulator: CcTalkSimulator
    let link: CcTalkLink
    let recorder = Recorder()
    let acceptor: CcTalkSession
    let channels: [CoinChannel]
    let time = ManualTimekeeper()
    let coin = Money(minorUnits: 100, currency: Currency(code: "KRW", minorDigits: 0))

    init() throws {
        var hopper = SimulatedHopperDevice.Settings()
        hopper.turnsPerCoin = 2
        simulator = try CcTalkSimulator(socketPath: path, hopper: hopper)
        link = CcTalkLink(port: "unix:\(path)", baudRate: 9_600, echo: false)
        let config = try ConfigLoader.parse(CcTalkHostTests.yaml, file: "link-test.yaml")
        let recorder = recorder
        channels = try #require(config.coinAcceptor?.channels)
        acceptor = Self.acceptorSession(on: link, channels: channels) { recorder.events.append($0) }
    }

    static func acceptorSession(
        on link: CcTalkLink, channels: [CoinChannel],
        emit: @escaping (CoinAcceptorEvent) -> Void
    ) -> CcTalkSession {
        CcTalkSession(bus: link.bus(CcTalkAddressing(device: 2, host: 1, checksum: .simple8)), channels: channels, emit: emit)
    }

    func hopper() throws -> CcTalkHopper {
        try CcTalkHopper.connect(coin: coin, address: 3, port: "unix:\(path)", on: link, timekeeper: time).0
    }

    func hopperSession() throws -> CcTalkHopperSession {
        let session = CcTalkHopperSession(bus: link.bus(CcTalkAddressing(device: 3, host: 1, checksum: .simple8)))
        _ = try session.identify()
        return session
    }

    func readyAcceptor() throws { try Self.ready(acceptor) }

    static func ready(_ acceptor: CcTalkSession) throws(BusFailure) {
        let identity = try acceptor.identify()
        _ = try acceptor.synchronise(identity: identity, resume: nil)
        try acceptor.setAcceptance(true)
    }

    /// A payout whose status reads alternate with the acceptor's polls: each device gets its own
    /// replies, a coin inserted mid-payout is credited once, and the dispense is sent once.
    @Test func theAcceptorIsPolledBetweenTheHoppersStatusReads() throws {
        try link.connect()
        defer {
            link.close()
            simulator.unplug()
        }
        let hopper = try hopper()
        let session = try hopperSession()
        try readyAcceptor()
        var polls = 0
        let result = hopper.payout(3, on: session) {
            time.advance(by: CcTalkHopper.statusInterval)
            if polls == 1 { simulator.insert(4) }
            #expect((try? acceptor.poll()) == .ok)
            polls += 1
        }
        #expect(result == PayoutDeviceResult(.ended(coin * 3, paid: coin * 3), counter: 1))
        #expect(polls >= 6, "two turns a coin: at least six status reads, each after an acceptor poll")
        #expect(recorder.coins.map(\.value) == [Money(minorUnits: 500, currency: coin.currency)])
        #expect(simulator.hopperDispenseCommands == 1)
        #expect(simulator.hopperCoins == 47)
    }

    /// Two threads, one per device, each firing commands as fast as it can: with the link's
    /// lock no command goes between another's request and reply, so every reply is the right
    /// device's. Without it, replies cross (`wrongSource`) or are swallowed by the other's flush.
    @Test func commandsFromTwoThreadsNeverCrossOnTheWire() throws {
        try link.connect()
        defer {
            link.close()
            simulator.unplug()
        }
        let session = try hopperSession()
        let rounds = 300
        let acceptorFailures = Atomic(0)
        let done = DispatchSemaphore(value: 0)
        let (link, channels) = (link, channels)
        PosixThread.start(name: "test-acceptor") {
            // The acceptor's own session, on its own thread, as the driver has it.
            let acceptor = Self.acceptorSession(on: link, channels: channels) { _ in }
            if (try? Self.ready(acceptor)) == nil { acceptorFailures.add(1, ordering: .relaxed) }
            for _ in 0..<rounds where (try? acceptor.poll()) != .ok { acceptorFailures.add(1, ordering: .relaxed) }
            done.signal()
        }
        var hopperFailures = 0
        for _ in 0..<rounds {
            // The hopper at rest: counter, remaining, paid, unpaid all 0.
            if (try? session.status()) != HopperStatus(eventCounter: 0, coinsRemaining: 0, lastPaid: 0, lastUnpaid: 0) { hopperFailures += 1 }
        }
        done.wait()
        #expect(hopperFailures == 0)
        #expect(acceptorFailures.load(ordering: .relaxed) == 0)
        #expect(simulator.pollCount >= rounds)
    }

    /// The socket goes away: the device that sees it takes the link down, the other gets the
    /// same loss without touching the port (one link change, one reason to log), and both work
    /// again once the owner connects it again.
    @Test func aLostLinkIsTheSameLossForEveryDeviceUntilTheOwnerReconnects() throws {
        try link.connect()
        defer {
            link.close()
            simulator.unplug()
        }
        let session = try hopperSession()
        try readyAcceptor()
        simulator.unplug()
        let connectionsBefore = simulator.connections
        guard case .disconnected(let loss) = try #require(throwsBusFailure { () throws(BusFailure) in _ = try acceptor.poll() }) else {
            Issue.record("the acceptor should see the link lost")
            return
        }
        #expect(throws: HopperError.bus(.disconnected(loss))) { _ = try session.status() }
        #expect(throws: LinkError.self) { try link.connect() }
        try simulator.replug()
        try link.connect()
        #expect(simulator.wait { $0.connections == connectionsBefore + 1 })
        #expect(try session.status().eventCounter == 0)
        #expect(try acceptor.identify().serialNumber == DeviceSettings().serialNumber)
    }

    @Test func aClosedLinkStaysClosedAndTheHopperIsStillStoppedBeforeIt() throws {
        try link.connect()
        defer { simulator.unplug() }
        let hopper = try hopper()
        let session = try hopperSession()
        _ = try session.dispense(5)
        hopper.emergencyStop()
        #expect(try session.status() == HopperStatus(eventCounter: 1, coinsRemaining: 0, lastPaid: 0, lastUnpaid: 5))
        link.close()
        #expect(throws: LinkError.self) { try link.connect() }
        #expect(throws: HopperError.self) { _ = try session.status() }
    }

    func throwsBusFailure(_ body: () throws(BusFailure) -> Void) -> BusFailure? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }
}
