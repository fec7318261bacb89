import MDB
import VendHardware
import VendTime
import VendingCore

/// What the MDB drivers tell the daemon. Coins and bills carry an event id per source, numbered
/// on from the last one credited (MDB devices keep no event counter of their own).
public enum MDBEvent: Sendable, Equatable {
    /// A coin went into the tubes or the cash box.
    case coinDeposited(AcceptedCoin)
    /// A bill is in the stacker: now, and only now, it is money (§6.2 POLL note 2).
    case billStacked(value: Money, event: CoinEventID)
    /// What the changer's tubes hold, by coin value, after SETUP/TUBE STATUS or a payout.
    case changeInventory([Money: Int])
    /// Coins paid out by the changer's own buttons.
    case dispensedManually(Money)
    /// The bill validator's stacker, after its initialisation and after each bill stacked.
    case stacker(StackerLevel)
    case notice(String, isFault: Bool)
    /// A card reader's report, as the machine's input.
    case card(Input)
}

/// How full the bill validator's stacker is.
public struct StackerLevel: Sendable, Equatable {
    public let bills: Int
    /// From the validator's SETUP.
    public let capacity: Int
    public let full: Bool
}

public typealias MDBEventHandler = @Sendable (MDBEvent) -> Void

extension MDBEvent {
    /// `emit` with every notice's text starting with the device it is about ("coin changer:
    /// tube jam"), as the journal reads it: one bus carries several devices.
    static func naming(_ device: String, _ emit: @escaping MDBEventHandler) -> MDBEventHandler {
        { event in
            guard case .notice(let text, let isFault) = event, !text.hasPrefix(device) else { return emit(event) }
            emit(.notice("\(device): \(text)", isFault: isFault))
        }
    }
}

/// Why a peripheral's exchange failed.
enum MDBFailure: Error, Equatable, CustomStringConvertible {
    case link(MDBLinkFailure)
    /// Silence after the repeats allowed (§2.2: repeat, do not reset, within the non-response time).
    case noAnswer(MDBBlock)
    case badAnswer(MDBBlock, MDBDecodeError)

    var description: String {
        switch self {
        case .link(let failure): "\(failure)"
        case .noAnswer(let block): "no answer to \(block)"
        case .badAnswer(let block, let error): "unexpected answer to \(block): \(error)"
        }
    }
}

/// One peripheral's side of the bus, as its driver sees it: commands go out through the
/// transport, and every answer (ACK or data) restarts the non-response clock.
final class MDBDeviceBus {
    static let repeats = 3

    let transport: MDBTransport
    let timekeeper: any Timekeeper
    private(set) var lastAnswer: ContinuousClock.Instant

    init(transport: MDBTransport, timekeeper: any Timekeeper) {
        self.transport = transport
        self.timekeeper = timekeeper
        lastAnswer = timekeeper.now
    }

    /// Sends `block`, repeating it on silence (never a money-moving command: see `sendOnce`).
    func send(_ block: MDBBlock) throws(MDBFailure) -> MDBAnswer {
        for _ in 1...Self.repeats {
            let answer = try sendOnce(block)
            if answer != .noAnswer { return answer }
        }
        throw .noAnswer(block)
    }

    /// One attempt. DISPENSE and ALTERNATIVE PAYOUT go only through here: an unanswered one may
    /// have run, and sending it again could pay twice (§A3 A3•9 condition 1).
    func sendOnce(_ block: MDBBlock) throws(MDBFailure) -> MDBAnswer {
        let answer: MDBAnswer
        do { answer = try transport.transact(block) } catch { throw .link(error) }
        if answer != .noAnswer { lastAnswer = timekeeper.now }
        return answer
    }

    /// A command whose answer must be a data block of some kind.
    func request<T>(_ block: MDBBlock, _ decode: ([UInt8]) throws(MDBDecodeError) -> T) throws(MDBFailure) -> T {
        let answer = try send(block)
        guard case .data(let bytes) = answer else { throw .badAnswer(block, MDBDecodeError("an ACK where data was expected", [])) }
        do { return try decode(bytes) } catch { throw .badAnswer(block, error) }
    }

    func forgetSilence() { lastAnswer = timekeeper.now }
}

/// A peripheral driver the master runs: its init sequence and one poll interval's work.
protocol MDBPeripheralDriver: AnyObject {
    var peripheral: MDBPeripheral { get }
    /// §5.4 changer 2 s, §6.4 bill validator 5 s.
    var nonResponseTime: Duration { get }
    /// Whether a POLL answer holds the device's JUST RESET.
    func isJustReset(_ poll: [UInt8]) -> Bool
    /// The initialisation sequence after a reset (§5.6, §6.6).
    func initialise(_ bus: MDBDeviceBus) throws(MDBFailure)
    /// Pending commands, then POLL and its activities. True when the device reports JUST RESET
    /// (or its driver has just sent it a RESET): it is initialised again.
    func tick(_ bus: MDBDeviceBus) throws(MDBFailure) -> Bool
    /// The device stopped answering, or the interface went away.
    func lost()
    /// Called while the device stays offline (every RESET attempt): work in progress that has
    /// waited too long is settled as the device left it.
    func stillOffline(_ now: ContinuousClock.Instant)
    /// A payout underway.
    var hasWorkInProgress: Bool { get }
    var pollCommand: UInt8 { get }
    /// It must be told something before any reset, bus reset included (a card reader holding an
    /// approval from before vendd stopped).
    var mustSettleBeforeReset: Bool { get }
    /// Tells it, before the master resets it.
    func settleBeforeReset(_ bus: MDBDeviceBus) throws(MDBFailure)
}

extension MDBPeripheralDriver {
    /// POLL is command 3 for changers and validators (§5.2, §6.2); a cashless device's is 2 (§7.2).
    var pollCommand: UInt8 { 3 }
    var mustSettleBeforeReset: Bool { false }
    func settleBeforeReset(_ bus: MDBDeviceBus) throws(MDBFailure) {}
}

/// The bus schedule: after a bus reset, each device is polled for its JUST RESET and
/// initialised, then polled at the interval; a device silent for its non-response time is
/// offline and gets a RESET every 10 s (§2.4.3) while the others are served. Everything runs in
/// `service()` on one thread, timed by the injected timekeeper.
final class MDBMaster {
    static let setupTime: Duration = .milliseconds(200)
    static let offlineResetInterval: Duration = .seconds(10)

    private enum Phase: Equatable {
        case awaitingJustReset(since: ContinuousClock.Instant)
        /// To be told what it must hear before its reset (see `mustSettleBeforeReset`).
        case settling
        /// To get a RESET of its own.
        case needsReset
        case initialising
        case ready
        case offline
    }

    private final class Link {
        let driver: MDBPeripheralDriver
        let bus: MDBDeviceBus
        var phase: Phase
        var due: ContinuousClock.Instant
        var health = LinkHealth()

        init(driver: MDBPeripheralDriver, bus: MDBDeviceBus, phase: Phase, due: ContinuousClock.Instant) {
            self.driver = driver
            self.bus = bus
            self.phase = phase
            self.due = due
        }
    }

    private let transport: MDBTransport
    private let timekeeper: any Timekeeper
    private let pollInterval: Duration
    private let emit: MDBEventHandler
    private let links: [Link]

    init(transport: MDBTransport, drivers: [MDBPeripheralDriver], timekeeper: any Timekeeper, pollInterval: Duration, emit: @escaping MDBEventHandler)
    {
        self.transport = transport
        self.timekeeper = timekeeper
        self.pollInterval = pollInterval
        self.emit = emit
        let now = timekeeper.now
        links = drivers.map {
            Link(driver: $0, bus: MDBDeviceBus(transport: transport, timekeeper: timekeeper), phase: .awaitingJustReset(since: now), due: now)
        }
    }

    /// Resets every peripheral at once; they are talked to again after the setup time (§3.1).
    func busReset() throws(MDBLinkFailure) {
        let now = timekeeper.now
        // A bus reset would reset a reader that must first hear how a vend ended: then each
        // device is reset alone, that reader after it has been told.
        guard !links.contains(where: { $0.driver.mustSettleBeforeReset }) else {
            for link in links {
                link.phase = link.driver.mustSettleBeforeReset ? .settling : .needsReset
                link.bus.forgetSilence()
                link.due = now
            }
            return
        }
        try transport.busReset()
        for link in links {
            link.phase = .awaitingJustReset(since: now)
            link.bus.forgetSilence()
            link.due = now + Self.setupTime
        }
    }

    /// Does what is due now; returns when to call again. Throws only when the interface is lost.
    @discardableResult
    func service(force: Bool = false) throws(MDBLinkFailure) -> ContinuousClock.Instant {
        for link in links where force || link.due <= timekeeper.now {
            try serve(link)
        }
        return links.map(\.due).min() ?? timekeeper.now + .seconds(60)
    }

    /// The interface went away: every device is lost until the next bus reset.
    func interfaceLost() {
        for link in links {
            link.phase = .offline
            link.driver.lost()
        }
    }

    var readyDevices: [MDBPeripheral] { links.filter { $0.phase == .ready }.map(\.driver.peripheral) }

    /// A payout still running on a device that answers: worth finishing before vendd stops.
    var hasWorkInProgress: Bool { links.contains { $0.phase != .offline && $0.driver.hasWorkInProgress } }

    private func serve(_ link: Link) throws(MDBLinkFailure) {
        let now = timekeeper.now
        link.due = now + pollInterval
        let name = link.driver.peripheral.name
        do {
            switch link.phase {
            case .awaitingJustReset(let since):
                let answer = try link.bus.send(MDBBlock(link.driver.peripheral.rawValue | link.driver.pollCommand))
                if case .data(let bytes) = answer, link.driver.isJustReset(bytes) {
                    try initialise(link)
                } else if now - since >= link.driver.nonResponseTime {
                    // It answers but never said JUST RESET (it missed the bus reset): reset it alone.
                    try resetAlone(link)
                }
            case .settling:
                try link.driver.settleBeforeReset(link.bus)
                link.phase = .needsReset
                try resetAlone(link)
            case .needsReset:
                try resetAlone(link)
            case .initialising:
                try initialise(link)
            case .ready:
                if try link.driver.tick(link.bus) {
                    emit(.notice("\(name) was reset (JUST RESET, or a RESET of its driver's): initialising it again", isFault: true))
                    try initialise(link)
                }
            case .offline:
                link.due = now + Self.offlineResetInterval
                link.driver.stillOffline(now)
                try resetAlone(link)
            }
        } catch {
            switch error {
            case .link(let failure): throw failure
            case .noAnswer, .badAnswer:
                if link.phase != .offline, now - link.bus.lastAnswer >= link.driver.nonResponseTime {
                    link.phase = .offline
                    link.due = now + Self.offlineResetInterval
                    link.driver.lost()
                    link.health.down(
                        "\(name) not answering for \(link.driver.nonResponseTime) (\(error)): check its power and the MDB cable; vendd sends it a RESET every 10 s",
                        { emitNotice($0) })
                } else if case .badAnswer = error {
                    emit(.notice("\(name): \(error)", isFault: true))
                }
            }
        }
    }

    private func initialise(_ link: Link) throws(MDBFailure) {
        // Until the sequence completes: a failure part-way is retried at the next interval.
        link.phase = .initialising
        try link.driver.initialise(link.bus)
        link.phase = .ready
        link.health.up("\(link.driver.peripheral.name) ready", { emitNotice($0) })
    }

    private func resetAlone(_ link: Link) throws(MDBFailure) {
        let answer = try link.bus.sendOnce(MDBBlock(link.driver.peripheral.rawValue))
        guard answer != .noAnswer else { return }
        link.phase = .awaitingJustReset(since: timekeeper.now)
        link.due = timekeeper.now + pollInterval
    }

    private func emitNotice(_ event: CoinAcceptorEvent) {
        if case .notice(let text, let isFault) = event { emit(.notice(text, isFault: isFault)) }
    }
}
