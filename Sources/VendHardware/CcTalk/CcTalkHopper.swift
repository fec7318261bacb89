import CcTalk
import Synchronization
import VendPOSIX
import VendSerial
import VendTime
import VendingCore

/// A ccTalk hopper on a port of its own, as a payout device. A payout runs on a thread of its own
/// (serial I/O blocks): one dispense command, then the hopper's status read every 100 ms until
/// its coins are out; what it reports paid is what the payout paid. The link is held under a lock,
/// so `lastPayout` (read at start) never talks over a payout.
public final class CcTalkHopper: PayoutDevice {
    /// The port (nil in tests) and the protocol session over it.
    struct Link {
        var stream: ByteStream?
        var session: CcTalkHopperSession
    }

    public let coin: Money
    public let identity: String
    public let description: String
    private let link: Mutex<Link>
    private let stopping = Atomic(false)
    private let timekeeper: any Timekeeper
    private let waiter: Waiter

    /// How often the hopper's status is read during a payout, and how long a coin may take.
    static let statusInterval: Duration = .milliseconds(100)
    static let timePerCoin: Duration = .seconds(1)

    /// Opens `port` and identifies the hopper at `address`: a hopper that does not answer or
    /// wants encrypted dispense commands stops vendd here, with what to do.
    public static func connect(coin: Money, address: Int, port: String, baudRate: Int,
                               timekeeper: any Timekeeper) throws(HopperError) -> (CcTalkHopper, [String]) {
        let stream: ByteStream
        do {
            stream = try PortAddress(port, baudRate: baudRate).open()
        } catch {
            throw .bus(.disconnected(error))
        }
        let bus = StreamBus(stream: stream, addressing: CcTalkAddressing(device: UInt8(address), host: 1, checksum: .simple8),
                            echo: false)
        let hopper = CcTalkHopper(coin: coin, identity: "cctalk-hopper@\(port)#\(address)",
                                  description: "ccTalk hopper at address \(address) on \(port) (\(coin.decimalString) coins)",
                                  link: Link(stream: stream, session: CcTalkHopperSession(bus: bus)), timekeeper: timekeeper)
        do {
            let flags = try hopper.link.withLock { link throws(HopperError) in try link.session.identify() }
            return (hopper, flags)
        } catch {
            hopper.link.withLock { $0.stream?.close() }
            throw error
        }
    }

    init(coin: Money, identity: String, description: String, link: sending Link, timekeeper: any Timekeeper) {
        self.coin = coin
        self.identity = identity
        self.description = description
        self.timekeeper = timekeeper
        self.link = Mutex(link)
        do {
            waiter = try Waiter()
        } catch {
            // pipe(2) fails only when the process is out of descriptors: no driver can run then.
            preconditionFailure("\(error)")
        }
    }

    /// ccTalk hoppers do not count their coins.
    public func inventory() -> [ChangeStock] { [ChangeStock(value: coin, count: nil)] }

    public func pay(_ amount: Money, completion: @escaping @Sendable (PayoutDeviceResult) -> Void) {
        let coins = Int(min(amount.minorUnits / coin.minorUnits, 255))
        PosixThread.start(name: "vendd-hopper") { [self] in
            let result = link.withLock { link in payout(coins, on: link.session) { sleep(Self.statusInterval) } }
            completion(result)
        }
    }

    /// One payout of `coins`, `wait` between two status reads. Never sends the dispense twice: a
    /// hopper that cannot say what it did makes its whole part unknown.
    func payout(_ coins: Int, on session: CcTalkHopperSession, wait: () -> Void) -> PayoutDeviceResult {
        let zero = Money.zero(coin.currency)
        guard coins > 0, !stopping.load(ordering: .acquiring) else { return PayoutDeviceResult(paid: zero, unknown: zero, counter: nil) }
        let counter: UInt8
        do {
            guard let taken = try session.dispense(coins) else { return PayoutDeviceResult(paid: zero, unknown: zero, counter: nil) }
            counter = taken
        } catch {
            return PayoutDeviceResult(paid: zero, unknown: coin * coins, counter: nil)
        }
        let deadline = timekeeper.now + Self.timePerCoin * coins + .seconds(5)
        var status: HopperStatus?
        while true {
            wait()
            if stopping.load(ordering: .acquiring) || timekeeper.now >= deadline { _ = try? session.emergencyStop() }
            status = try? session.status()
            if let status, !status.isPaying { break }
            if status == nil, timekeeper.now >= deadline { break }
        }
        guard let status, status.eventCounter == counter else {
            // Reset (power) or silent: what it paid of this payout can no longer be told.
            return PayoutDeviceResult(paid: zero, unknown: coin * coins, counter: status.map { UInt64($0.eventCounter) })
        }
        return PayoutDeviceResult(paid: coin * Int(status.lastPaid), unknown: zero, counter: UInt64(counter))
    }

    public func lastPayout() -> LastPayoutReport {
        let status = link.withLock { try? $0.session.status() }
        guard let status else { return LastPayoutReport(counter: nil, paid: .zero(coin.currency), unpaid: .zero(coin.currency), isUnknown: true) }
        return LastPayoutReport(counter: UInt64(status.eventCounter), paid: coin * Int(status.lastPaid),
                                unpaid: coin * Int(status.lastUnpaid), isUnknown: status.wasReset)
    }

    /// Stops a payout within one status interval, and the hopper itself; then releases the port.
    public func emergencyStop() {
        stopping.store(true, ordering: .releasing)
        waiter.wake()
        link.withLock { link in
            _ = try? link.session.emergencyStop()
            link.stream?.close()
            link.stream = nil
        }
    }

    private func sleep(_ duration: Duration) {
        let alarm = timekeeper.schedule(after: duration) { [waiter] in waiter.wake() }
        _ = waiter.wait(for: nil, timeout: .seconds(3_600))
        timekeeper.cancel(alarm)
    }
}
