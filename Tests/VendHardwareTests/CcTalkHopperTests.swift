import CcTalk
import CcTalkSimulator
import Testing
import VendTime
import VendingCore

@testable import VendDrivers
@testable import VendHardware

/// A bus to one simulated hopper through the real codec; it can lose the next request or the
/// next reply (the command then did, or did not, reach the hopper).
final class HopperLoopbackBus: CcTalkBus, @unchecked Sendable {
    // @unchecked: a test drives it from one thread; a hopper driver made on it is that thread's too.
    var device: SimulatedHopperDevice
    let addressing = CcTalkAddressing(device: 3, host: 1, checksum: .simple8)
    private var exchanges = 0
    private var lostRequest: Int?
    private var lostReply: Int?
    /// Nothing answers while set (a loose cable); the hopper's motor runs on.
    var silent = false

    init(device: SimulatedHopperDevice = SimulatedHopperDevice()) { self.device = device }

    /// The `n`th exchange from now (1 = the next) loses its request: the hopper never hears it.
    func loseRequest(ofExchange n: Int) { lostRequest = exchanges + n }
    /// The `n`th exchange from now loses its reply: the hopper acted, the host does not know.
    func loseReply(ofExchange n: Int) { lostReply = exchanges + n }

    func exchange(_ header: Header, _ data: [UInt8], timeout: Duration) -> Result<[UInt8], BusFailure> {
        exchanges += 1
        if silent { return .failure(.noReply(discardedBytes: 0)) }
        if exchanges == lostRequest { return .failure(.noReply(discardedBytes: 0)) }
        guard let request = Frame.decode(addressing.request(header, data), .simple8),
            let reply = device.respond(to: request)
        else { return .failure(.noReply(discardedBytes: 0)) }
        if exchanges == lostReply { return .failure(.noReply(discardedBytes: 0)) }
        var receiver = addressing.receiver()
        guard let frame = receiver.receive(reply.encoded(.simple8), at: 0).first else { return .failure(.noReply(discardedBytes: 0)) }
        return addressing.check(frame)
    }
}

@Suite struct CcTalkHopperTests {
    let bus = HopperLoopbackBus()

    func ready() throws -> CcTalkHopperSession {
        let session = CcTalkHopperSession(bus: bus)
        _ = try session.identify()
        return session
    }

    func run(_ coins: Int) {
        for _ in 0..<coins { bus.device.payOneCoin() }
    }

    @Test func aDispenseIsCountedAndPaidCoinByCoin() throws {
        let session = try ready()
        #expect(session.serialNumber == 7_654_321)
        #expect(try session.status() == HopperStatus(eventCounter: 0, coinsRemaining: 0, lastPaid: 0, lastUnpaid: 0))
        #expect(try session.dispense(3) == 1)
        #expect(try session.status().isPaying)
        run(3)
        #expect(try session.status() == HopperStatus(eventCounter: 1, coinsRemaining: 0, lastPaid: 3, lastUnpaid: 0))
        #expect(bus.device.coins == 47)
    }

    @Test func aJamLeavesCoinsUnpaid() throws {
        let session = try ready()
        bus.device.jamAfter = 1
        _ = try session.dispense(4)
        run(4)
        #expect(try session.status() == HopperStatus(eventCounter: 1, coinsRemaining: 0, lastPaid: 1, lastUnpaid: 3))
    }

    /// Enable, status, then the dispense: its reply is lost on the way back.
    @Test func aDispenseWhoseReplyIsLostCountsAsTakenOnce() throws {
        let session = try ready()
        bus.loseReply(ofExchange: 3)
        #expect(try session.dispense(2) == 1)
        #expect(bus.device.dispenseCommands == 1)
        run(2)
        #expect(try session.status().lastPaid == 2)
    }

    @Test func aDispenseThatNeverArrivedIsReportedNotTaken() throws {
        let session = try ready()
        bus.loseRequest(ofExchange: 3)
        #expect(try session.dispense(2) == nil)
        #expect(bus.device.dispenseCommands == 0)
    }

    @Test func aPowerCutMidPayoutShowsAsAResetCounter() throws {
        let session = try ready()
        _ = try session.dispense(5)
        run(2)
        bus.device.powerCut()
        let status = try session.status()
        #expect(status.wasReset)
        #expect(bus.device.coins == 48)
    }

    @Test func emergencyStopReportsTheCoinsLeft() throws {
        let session = try ready()
        _ = try session.dispense(5)
        run(1)
        #expect(try session.emergencyStop() == 4)
        #expect(try session.status() == HopperStatus(eventCounter: 1, coinsRemaining: 0, lastPaid: 1, lastUnpaid: 4))
        #expect(!bus.device.enabled)
    }

    @Test func anEncryptedHopperIsRefusedWithAClearMessage() throws {
        bus.device.settings.encrypted = true
        #expect(throws: HopperError.encrypted(serial: 7_654_321)) { try CcTalkHopperSession(bus: bus).identify() }
        #expect(HopperError.encrypted(serial: 7_654_321).description.contains("wants encrypted dispense commands"))
    }
}

/// The hopper as a payout device: one payout, its status read between coins (the `wait` the
/// thread sleeps in turns the simulated motor here).
@Suite struct CcTalkHopperPayoutTests {
    let bus = HopperLoopbackBus()
    let time = ManualTimekeeper()
    let coin = Money(minorUnits: 100, currency: Currency(code: "KRW", minorDigits: 0))

    func hopper() throws -> (CcTalkHopper, CcTalkHopperSession) {
        let session = CcTalkHopperSession(bus: bus)
        _ = try session.identify()
        let hopper = CcTalkHopper(
            coin: coin, identity: "hopper", description: "test hopper",
            session: CcTalkHopperSession(bus: HopperLoopbackBus()), timekeeper: time)
        return (hopper, session)
    }

    @Test func aPayoutReportsWhatTheHopperPaid() throws {
        let (hopper, session) = try hopper()
        let result = hopper.payout(3, on: session) { bus.device.payOneCoin() }
        #expect(result == PayoutDeviceResult(.ended(coin * 3, paid: coin * 3), counter: 1))
        #expect(bus.device.dispenseCommands == 1)
    }

    @Test func aJammedHopperReportsOnlyTheCoinsOut() throws {
        let (hopper, session) = try hopper()
        bus.device.jamAfter = 1
        let result = hopper.payout(3, on: session) { bus.device.payOneCoin() }
        #expect(result == PayoutDeviceResult(.ended(coin * 3, paid: coin), counter: 1))
    }

    @Test func aPowerCutMidPayoutMakesItUnknownNeverPaidAgain() throws {
        let (hopper, session) = try hopper()
        var turns = 0
        let result = hopper.payout(4, on: session) {
            turns += 1
            if turns == 2 { bus.device.powerCut() } else { bus.device.payOneCoin() }
        }
        #expect(result == PayoutDeviceResult(.cannotTell(coin * 4, paid: .zero(coin.currency)), counter: 0))
        #expect(bus.device.dispenseCommands == 1)
        #expect(try session.status().wasReset)
    }

    @Test func aDispenseTheHopperNeverHeardPaysNothing() throws {
        let (hopper, session) = try hopper()
        bus.loseRequest(ofExchange: 3)  // enable, status, dispense
        let result = hopper.payout(2, on: session) { bus.device.payOneCoin() }
        #expect(result == PayoutDeviceResult(.neverStarted(coin * 2), counter: nil))
        #expect(bus.device.dispenseCommands == 0)
    }

    /// Low sensor fitted and triggered below 10 coins: above it the hopper is plenty (nil),
    /// below it empty for exact change (0) though coins are left; a refill clears it.
    @Test func belowItsLowSensorTheHopperCountsAsEmpty() throws {
        bus.device.settings.lowLevelTrigger = 10
        bus.device.refill(12 - bus.device.coins)
        let (hopper, session) = try hopper()
        #expect(hopper.readLevel(on: session))
        #expect(hopper.inventory() == [ChangeStock(value: coin, count: nil)])
        #expect(hopper.levelReading() == .ok)
        _ = hopper.payout(2, on: session) { bus.device.payOneCoin() }
        #expect(!hopper.readLevel(on: session), "12 → 10 coins: still at the mark")
        _ = hopper.payout(1, on: session) { bus.device.payOneCoin() }
        #expect(hopper.readLevel(on: session))
        #expect(hopper.inventory() == [ChangeStock(value: coin, count: 0)])
        #expect(hopper.levelReading() == .low)
        bus.device.refill(20)
        #expect(hopper.readLevel(on: session))
        #expect(hopper.inventory() == [ChangeStock(value: coin, count: nil)])
        #expect(hopper.levelReading() == .ok)
    }

    /// No sensor fitted (status 0): as before, plenty and no level; a hopper that stops answering
    /// 217 keeps what it said last.
    @Test func aHopperWithoutLevelSensorsIsTakenAsPlenty() throws {
        let (hopper, session) = try hopper()
        #expect(hopper.readLevel(on: session))
        #expect(hopper.levelReading() == nil)
        _ = hopper.payout(3, on: session) { bus.device.payOneCoin() }
        #expect(hopper.inventory() == [ChangeStock(value: coin, count: nil)])

        bus.device.settings.lowLevelTrigger = 100
        #expect(hopper.readLevel(on: session))
        #expect(hopper.levelReading() == .low)
        bus.device.settings.lowLevelTrigger = nil
        bus.device.settings.address = 9  // silent at address 3
        #expect(!hopper.readLevel(on: session))
        #expect(hopper.levelReading() == .low)
    }
}
