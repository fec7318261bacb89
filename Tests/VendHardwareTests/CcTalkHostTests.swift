import CcTalk
import CcTalkSimulator
import Testing
import VendConfig
import VendingCore

@testable import VendDrivers
@testable import VendHardware

/// The ccTalk host against the simulated device, packet by packet through the real codec, with
/// no I/O: a bus that hands each encoded request to the device and decodes its reply.
final class LoopbackBus: CcTalkBus {
    var device: SimulatedAcceptorDevice
    let addressing = CcTalkAddressing(device: 2, host: 1, checksum: .simple8)
    /// The next this many exchanges get no reply.
    var dropNext = 0
    private(set) var sent: [Header] = []

    init(device: SimulatedAcceptorDevice = SimulatedAcceptorDevice()) { self.device = device }

    func exchange(_ header: Header, _ data: [UInt8], timeout: Duration) -> Result<[UInt8], BusFailure> {
        sent.append(header)
        if dropNext > 0 {
            dropNext -= 1
            return .failure(.noReply(discardedBytes: 0))
        }
        guard let request = Frame.decode(addressing.request(header, data), .simple8),
            let reply = device.respond(to: request)
        else { return .failure(.noReply(discardedBytes: 0)) }
        var receiver = addressing.receiver()
        guard let frame = receiver.receive(reply.encoded(.simple8), at: 0).first else { return .failure(.noReply(discardedBytes: 0)) }
        return addressing.check(frame)
    }
}

final class Recorder {
    var events: [CoinAcceptorEvent] = []
    var coins: [AcceptedCoin] { events.compactMap { if case .accepted(let coin) = $0 { coin } else { nil } } }
    var notices: [String] { events.compactMap { if case .notice(let text, _) = $0 { text } else { nil } } }
    var faults: [String] { events.compactMap { if case .notice(let text, true) = $0 { text } else { nil } } }
    var synchronised: [CoinEventID] { events.compactMap { if case .synchronised(let id) = $0 { id } else { nil } } }
}

@Suite struct CcTalkHostTests {
    static let yaml = HardwareFixtures.yaml.replacingOccurrences(
        of: """
              port: /dev/null
              protocol: bytecode
              channels:
                - { channel: 1, value: 500 }
                - { channel: 2, value: 100, enabled: false }
            """,
        with: """
              port: unix:/tmp/none.sock
              protocol: cctalk
              channels:
                - { channel: 1, value: 10, enabled: false }
                - { channel: 2, value: 50 }
                - { channel: 3, value: 100 }
                - { channel: 4, value: 500 }
            """)

    let bus = LoopbackBus()
    let recorder = Recorder()
    let session: CcTalkSession

    init() throws {
        let config = try ConfigLoader.parse(Self.yaml, file: "cctalk-test.yaml")
        let channels = try #require(config.coinAcceptor?.channels)
        let recorder = recorder
        session = CcTalkSession(bus: bus, channels: channels, emit: { recorder.events.append($0) })
    }

    /// Identified, synchronised from `stored`, coins enabled.
    func ready(stored: UInt64? = nil) throws {
        let identity = try session.identify()
        _ = try session.synchronise(identity: identity, resume: stored.map(EventCursor.init))
        try session.setAcceptance(true)
    }

    func won(_ amount: Int64) -> Money { Money(minorUnits: amount, currency: Currency(code: "KRW", minorDigits: 0)) }

    @Test func initialisationIdentifiesTheDeviceAndChecksTheCoinTable() throws {
        bus.device.settings.coinIDs = ["KR010A", "KR050A", "KR100A", "KR100B"]
        let identity = try session.identify()
        #expect(identity.serialNumber == 12_345_678)
        #expect(identity.source == "cctalk:12345678")
        #expect(identity.summary == "SIM CCSIM1 (Coin Acceptor), serial 12345678, software SIM-1.0")
        #expect(identity.maximumPollInterval == .milliseconds(200))
        #expect(
            bus.sent.prefix(6) == [
                .simplePoll, .requestEquipmentCategory, .requestManufacturerID,
                .requestProductCode, .requestSerialNumber, .requestSoftwareRevision,
            ])
        try session.checkCoinIDs()
        #expect(recorder.notices.contains("coin ids: 1=KR010A, 2=KR050A, 3=KR100A, 4=KR100B"))
        #expect(recorder.faults.count == 1)
        #expect(recorder.faults.first?.contains("channel 4 is worth 500 here, but the acceptor's coin at position 4 is KR100B") == true)
    }

    @Test func inhibitsFollowTheChannelTableWithCoin1AtBit0() throws {
        try ready()
        #expect(bus.device.inhibitMask == [0b0000_1110, 0])  // channels 2, 3, 4; channel 1 disabled
        #expect(!bus.device.masterInhibitActive)
        try session.setAcceptance(false)
        #expect(bus.device.masterInhibitActive)
    }

    @Test func aNewDeviceIsCountedFromWhereItStands() throws {
        bus.device.burst(3, count: 3)
        try ready(stored: nil)
        #expect(recorder.coins.isEmpty)
        #expect(recorder.synchronised == [CoinEventID(source: "cctalk:12345678", sequence: 3)])
        #expect(recorder.notices.contains { $0.contains("its 3 earlier event(s) are not credited") })
        #expect(bus.device.insert(4) == .accepted)
        #expect(try session.poll() == .ok)
        #expect(recorder.coins == [AcceptedCoin(channel: 4, value: won(500), event: CoinEventID(source: "cctalk:12345678", sequence: 4))])
    }

    @Test func onRestartOnlyEventsNewerThanTheStoredOneAreCredited() throws {
        bus.device.burst(2, count: 2)  // credited before the restart: sequences 1 and 2
        bus.device.burst(3, count: 1)  // accepted, then vendd died before polling: sequence 3
        try ready(stored: 2)
        #expect(recorder.coins.map(\.value) == [won(100)])
        #expect(recorder.coins.map(\.event.sequence) == [3])
    }

    @Test func theCounterWrapsFrom255To1() throws {
        bus.device.burst(2, count: 253)
        try ready(stored: 253)
        for _ in 0..<4 { bus.device.burst(3, count: 1) }
        #expect(bus.device.counter == 2)
        #expect(try session.poll() == .ok)
        #expect(recorder.coins.map(\.event.sequence) == [254, 255, 256, 257])
        #expect(recorder.coins.allSatisfy { $0.value == won(100) })
    }

    @Test func moreThanFiveEventsBetweenPollsCreditsTheFiveKnownAndSaysSoLoudly() throws {
        try ready(stored: 0)
        bus.device.burst(4, count: 7)
        _ = try session.poll()
        #expect(recorder.coins.map(\.event.sequence) == [3, 4, 5, 6, 7])
        #expect(recorder.faults.contains { $0.hasPrefix("LOST 2 coin event(s)") })
    }

    @Test func eventsTrickleTwoPerPoll() throws {
        bus.device.releasesTwoPerPoll = true
        try ready(stored: 0)
        for position in [2, 3, 4, 4, 3] { #expect(bus.device.insert(position) == .accepted) }
        var perPoll: [Int] = []
        for _ in 0..<4 {
            let before = recorder.coins.count
            _ = try session.poll()
            perPoll.append(recorder.coins.count - before)
        }
        #expect(perPoll == [2, 2, 1, 0])
        #expect(recorder.coins.map(\.channel) == [2, 3, 4, 4, 3])
        #expect(recorder.coins.map(\.event.sequence) == [1, 2, 3, 4, 5])
    }

    @Test func aCounterBackAtZeroIsAReset() throws {
        try ready(stored: 0)
        _ = bus.device.insert(4)
        _ = try session.poll()
        bus.device.reset()
        #expect(try session.poll() == .deviceReset)
        #expect(recorder.synchronised.last == CoinEventID(source: "cctalk:12345678", sequence: 255))
        #expect(recorder.faults.contains { $0.contains("was reset or lost power") })
        // Re-initialised: the next coin continues the sequence in a new lap.
        try session.setAcceptance(true)
        _ = bus.device.insert(2)
        _ = try session.poll()
        #expect(recorder.coins.map(\.event.sequence) == [1, 256])
    }

    @Test func errorEventsAreLoggedByNameAndAnUnexpectedInhibitedCoinReappliesInhibits() throws {
        try ready(stored: 0)
        bus.device.error(14)
        _ = try session.poll()
        #expect(recorder.faults.contains("event 1: credit sensor blocked (code 14; coin returned: yes)"))
        #expect(!session.inhibitsNeedReapplying)
        bus.device.reset()  // the device forgets our inhibits …
        _ = try session.poll()
        bus.device.error(2)  // … and says so with a dummy "inhibited coin"
        _ = try session.poll()
        #expect(session.inhibitsNeedReapplying)
        #expect(recorder.coins.isEmpty)
    }

    @Test func repeatedFaultsLeadToASelfCheck() throws {
        try ready(stored: 0)
        for code: UInt8 in [14, 14, 6] { bus.device.error(code) }
        _ = try session.poll()
        #expect(session.suspicion >= 3)
        session.selfCheck()
        #expect(recorder.events.last == .notice("self-check: OK", isFault: false))
        #expect(session.suspicion == 0)
    }

    @Test func idempotentCommandsAreRetriedAndResetIsNot() throws {
        try ready(stored: 0)
        bus.dropNext = 2
        _ = try session.request(.readBufferedCredit)
        #expect(bus.sent.suffix(3) == [.readBufferedCredit, .readBufferedCredit, .readBufferedCredit])
        bus.dropNext = 3
        #expect(throws: BusFailure.noReply(discardedBytes: 0)) { try session.request(.simplePoll) }
        bus.dropNext = 1
        #expect(throws: BusFailure.noReply(discardedBytes: 0)) { try session.request(.resetDevice) }
        #expect(bus.sent.last == .resetDevice && bus.sent.dropLast().last == .simplePoll)
    }

    @Test func aCoinOnAnUnmappedPositionIsNotCredited() throws {
        bus.device.settings.coinIDs += ["KR001A"]
        try ready(stored: 0)
        bus.device.burst(5, count: 1)
        _ = try session.poll()
        #expect(recorder.coins.isEmpty)
        #expect(recorder.faults.contains { $0.contains("position 5, which coin_acceptor.channels does not map: NOT credited") })
    }

    @Test func theDevicesPollingPriorityShortensALongerInterval() throws {
        let config = try ConfigLoader.parse(
            Self.yaml.replacingOccurrences(of: "protocol: cctalk", with: "protocol: cctalk\n  cctalk: { poll_interval_ms: 500 }"), file: "t.yaml")
        let coins = try #require(config.coinAcceptor)
        let driver = CcTalkDriver(
            link: CcTalkLink(port: "unix:/x", baudRate: 9_600, echo: false), settings: try #require(coins.cctalk), channels: coins.channels)
        #expect(driver.pollInterval(deviceMaximum: .milliseconds(200)) == .milliseconds(200))
        #expect(driver.pollInterval(deviceMaximum: .seconds(2)) == .milliseconds(500))
        #expect(driver.pollInterval(deviceMaximum: nil) == .milliseconds(500))
        #expect(driver.pollInterval(deviceMaximum: .milliseconds(10)) == .milliseconds(50))
    }
}
