import CcTalk
import Synchronization
import VendHardware
import VendPOSIX
import VendTime
import VendingCore

/// A ccTalk hopper as a payout device, on a port of its own or on the coin acceptor's bus (a
/// `CcTalkLink` either way: its commands go between the acceptor's polls). A payout runs on a
/// thread of its own (serial I/O blocks): one dispense command, then the hopper's status read
/// every 100 ms until its coins are out; what it reports paid is what the payout paid. The
/// session is held under a lock, so `lastPayout` (read at start) never talks over a payout.
///
/// A hopper cannot count its coins, but it may have level sensors (header 217), read at start,
/// after each payout, and every `levelInterval` while watched: below its low sensor's mark it
/// counts as empty (see `inventory()`).
public final class CcTalkHopper: PayoutDevice {
    public let coin: Money
    public var singleCoin: Money? { coin }
    public let identity: String
    public let description: String
    private let session: Mutex<CcTalkHopperSession>
    private let stopping = Atomic(false)
    private let timekeeper: any Timekeeper
    private let waiter: Waiter
    /// What the level sensors said last; nil when the hopper has none or never answered 217.
    private let level = Mutex<HopperLevel?>(nil)
    private let levelWaiter: Waiter
    private let watching = Atomic(false)

    /// How often the hopper's status is read during a payout, and how long it may go without a
    /// coin out (its status unchanged) before it is stopped: real hoppers pay several coins a
    /// second.
    static let statusInterval: Duration = .milliseconds(100)
    static let stallLimit: Duration = .seconds(5)
    /// How often the level sensors are read while the hopper is idle: rarely, because a hopper on
    /// the coin acceptor's bus takes its turns between the acceptor's polls, and a refill (the
    /// only change while idle) is not urgent.
    static let levelInterval: Duration = .seconds(5)

    /// Identifies the hopper at `address` on `link` (`port` as configured, for its identity): a
    /// hopper that does not answer or wants encrypted dispense commands stops vendd here, with
    /// what to do. `hostAddress` is the one the bus's other devices answer to.
    public static func connect(
        coin: Money, address: Int, hostAddress: Int = 1, port: String, on link: CcTalkLink,
        timekeeper: any Timekeeper
    ) throws(HopperError) -> (CcTalkHopper, [String]) {
        do {
            try link.connect()
        } catch {
            throw .bus(.disconnected(error))
        }
        let bus = link.bus(CcTalkAddressing(device: UInt8(address), host: UInt8(hostAddress), checksum: .simple8))
        let hopper = CcTalkHopper(
            coin: coin, identity: "cctalk-hopper@\(port)#\(address)",
            description: "ccTalk hopper at address \(address) on \(link.name) (\(coin.decimalString) coins)",
            session: CcTalkHopperSession(bus: bus), timekeeper: timekeeper)
        let flags = try hopper.session.withLock { session throws(HopperError) in
            let flags = try session.identify()
            _ = hopper.readLevel(on: session)
            return flags
        }
        return (hopper, flags)
    }

    init(coin: Money, identity: String, description: String, session: sending CcTalkHopperSession, timekeeper: any Timekeeper) {
        self.coin = coin
        self.identity = identity
        self.description = description
        self.timekeeper = timekeeper
        self.session = Mutex(session)
        do {
            waiter = try Waiter()
            levelWaiter = try Waiter()
        } catch {
            // pipe(2) fails only when the process is out of descriptors: no driver can run then.
            preconditionFailure("\(error)")
        }
    }

    /// ccTalk hoppers do not count their coins: one without a low level sensor, or above its mark,
    /// is taken as plenty (nil). Below the low sensor's mark it counts as empty (0), though some
    /// coins are left: a conservative choice, so the machine asks customers for exact money while
    /// the hopper can still pay the change already owed, rather than run dry in the middle of a
    /// payout. A refill clears it at the next level read.
    public func inventory() -> [ChangeStock] {
        [ChangeStock(value: coin, count: level.withLock { $0 }?.isBelowLow == true ? 0 : nil)]
    }

    public func levelReading() -> CoinLevelReading? {
        guard let level = level.withLock({ $0 }), level.hasLowSensor || level.hasHighSensor else { return nil }
        return level.isBelowLow ? .low : level.isAtOrAboveHigh ? .high : .ok
    }

    /// Reads the level sensors every `levelInterval` on a thread of its own (between payouts: it
    /// waits for the session), calling `changed` when what they say changes. A hopper that has no
    /// sensor or did not answer 217 at start is not asked again.
    public func watchInventory(_ changed: @escaping @Sendable () -> Void) {
        guard hasLevelSensors, !watching.exchange(true, ordering: .acquiringAndReleasing) else { return }
        PosixThread.start(name: "vendd-hopper-level") { [self] in
            while !stopping.load(ordering: .acquiring) {
                sleep(Self.levelInterval, on: levelWaiter)
                guard !stopping.load(ordering: .acquiring) else { return }
                if session.withLock({ session in readLevel(on: session) }) { changed() }
            }
        }
    }

    /// As read at start: a hopper without sensors, or one that does not answer 217, is not asked
    /// again (each question would cost a shared bus up to three reply timeouts).
    private var hasLevelSensors: Bool { levelReading() != nil }

    /// Reads the level sensors into `level`; true when what they say changed. A hopper that does
    /// not answer keeps what it said last.
    func readLevel(on session: CcTalkHopperSession) -> Bool {
        guard let now = try? session.level() else { return false }
        return level.withLock { level in
            defer { level = now }
            return level != now
        }
    }

    /// The level sensors, if it has any, are read after the payout, before the machine is told it
    /// ended: the machine then judges exact change from what is left.
    public func pay(_ amount: Money, completion: @escaping @Sendable (PayoutDeviceResult) -> Void) {
        let coins = Int(min(amount.minorUnits / coin.minorUnits, 255))
        PosixThread.start(name: "vendd-hopper") { [self] in
            let result = session.withLock { session in
                let result = payout(coins, on: session) { sleep(Self.statusInterval, on: waiter) }
                if hasLevelSensors { _ = readLevel(on: session) }
                return result
            }
            completion(result)
        }
    }

    /// One payout of `coins`, `wait` between two status reads. Never sends the dispense twice.
    /// Patience comes from progress: it waits while the hopper's status moves (a coin out), and
    /// only after `stallLimit` without a change — or when vendd stops — sends an emergency stop,
    /// after which the hopper's own counters say what was paid and what was not. A hopper that
    /// cannot say (silent, reset) leaves every coin not reported paid unknown.
    func payout(_ coins: Int, on session: CcTalkHopperSession, wait: () -> Void) -> PayoutDeviceResult {
        let asked = coin * coins
        guard coins > 0, !stopping.load(ordering: .acquiring) else { return PayoutDeviceResult(.neverStarted(asked), counter: nil) }
        let counter: UInt8
        do {
            guard let taken = try session.dispense(coins) else { return PayoutDeviceResult(.neverStarted(asked), counter: nil) }
            counter = taken
        } catch {
            // The command may have reached it: what it paid can no longer be told.
            return PayoutDeviceResult(.cannotTell(asked, paid: .zero(coin.currency)), counter: nil)
        }
        var lastChange = timekeeper.now
        var lastSeen: HopperStatus?
        var stopSent = false
        var final: HopperStatus?
        while final == nil {
            wait()
            let status = try? session.status()
            if let status, status != lastSeen {
                lastSeen = status
                lastChange = timekeeper.now
            }
            if let status, !status.isPaying || status.eventCounter != counter {
                final = status
                break
            }
            let stalled = timekeeper.now - lastChange >= Self.stallLimit
            if !stopSent, stalled || stopping.load(ordering: .acquiring) {
                _ = try? session.emergencyStop()
                stopSent = true
                lastChange = timekeeper.now  // one more stretch for it to answer
            } else if stopSent, stalled {
                break  // silent, or still paying after an emergency stop: it cannot say
            }
        }
        guard let final, final.eventCounter == counter else {
            // Reset (power) or silent: what it paid of this payout can no longer be told.
            return PayoutDeviceResult(.cannotTell(asked, paid: .zero(coin.currency)), counter: (final ?? lastSeen).map { UInt64($0.eventCounter) })
        }
        return PayoutDeviceResult(.ended(asked, paid: coin * Int(final.lastPaid)), counter: UInt64(counter))
    }

    /// A hopper still paying (vendd was killed mid-payout; its motor ran on) is stopped first, so
    /// what it reports is final: the coins it did not pay go back to the customer's credit.
    public func lastPayout() -> LastPayoutReport {
        let status = session.withLock { session -> HopperStatus? in
            guard let status = try? session.status() else { return nil }
            guard status.isPaying else { return status }
            _ = try? session.emergencyStop()
            return try? session.status()
        }
        guard let status else { return LastPayoutReport(counter: nil, paid: .zero(coin.currency), unpaid: .zero(coin.currency), isUnknown: true) }
        return LastPayoutReport(
            counter: UInt64(status.eventCounter), paid: coin * Int(status.lastPaid),
            unpaid: coin * Int(status.lastUnpaid), isUnknown: status.wasReset)
    }

    /// Stops a payout within one status interval, the hopper itself, and the level watch. The link stays open:
    /// its owner closes it (the acceptor may still have to refuse coins on it).
    public func emergencyStop() {
        stopping.store(true, ordering: .releasing)
        waiter.wake()
        levelWaiter.wake()
        session.withLock { session in _ = try? session.emergencyStop() }
    }

    private func sleep(_ duration: Duration, on waiter: Waiter) {
        let alarm = timekeeper.schedule(after: duration) { waiter.wake() }
        _ = waiter.wait(for: nil, timeout: .seconds(3_600))
        timekeeper.cancel(alarm)
    }
}
