import Synchronization
import VendDEX
import VendPOSIX
import VendSerial
import VendSettings
import VendTime

/// What the DEX port hands to the machine's shell. Called on the port's thread, one at a time;
/// the driver itself never touches money.
public struct DEXPortHandlers: Sendable {
    /// A read was asked for: the audit to send, made now (nil: none can be made, the handheld is
    /// answered 04 "no data").
    public var prepareAudit: @Sendable (_ handheld: DEXFirstHandshake) -> [UInt8]?
    /// The handheld acknowledged the last block of this audit.
    public var auditDelivered: @Sendable (_ handheld: DEXFirstHandshake, _ audit: [UInt8]) -> Void
    /// A DDCMP security read (list 2) reached the handheld whole: it leaves the interim figures
    /// as they are.
    public var auditCopied: @Sendable (_ handheld: DEXFirstHandshake, _ audit: [UInt8]) -> Void
    /// The handheld sent a configuration and ended its session properly.
    public var configurationReceived: @Sendable (_ handheld: DEXFirstHandshake, _ text: [UInt8]) -> Void
    /// A session ended without its transfer (`handheld` nil: before a first handshake was read).
    public var sessionFailed: @Sendable (_ handheld: DEXFirstHandshake?, _ stage: String, _ reason: String) -> Void
    /// The port opened (`open`) or went away, with what to log.
    public var linkChanged: @Sendable (_ message: String, _ open: Bool) -> Void
    /// A session had a hiccup it recovers from (a block NAKed, a retry).
    public var warning: @Sendable (_ message: String) -> Void
    /// The DDCMP security and pass code the machine keeps (nil: none, any is accepted).
    public var passCode: @Sendable () -> [UInt8]?
    /// A DDCMP handheld's non-zero code was learnt (EVA-DTS 6.1.1 §6.1.6): keep it durably.
    public var passCodeLearned: @Sendable (_ code: [UInt8], _ handheld: DEXFirstHandshake) -> Void

    public init(
        prepareAudit: @escaping @Sendable (DEXFirstHandshake) -> [UInt8]?,
        auditDelivered: @escaping @Sendable (DEXFirstHandshake, [UInt8]) -> Void,
        configurationReceived: @escaping @Sendable (DEXFirstHandshake, [UInt8]) -> Void,
        sessionFailed: @escaping @Sendable (DEXFirstHandshake?, String, String) -> Void,
        linkChanged: @escaping @Sendable (String, Bool) -> Void, warning: @escaping @Sendable (String) -> Void,
        auditCopied: @escaping @Sendable (DEXFirstHandshake, [UInt8]) -> Void = { _, _ in },
        passCode: @escaping @Sendable () -> [UInt8]? = { nil },
        passCodeLearned: @escaping @Sendable ([UInt8], DEXFirstHandshake) -> Void = { _, _ in }
    ) {
        self.auditCopied = auditCopied
        self.passCode = passCode
        self.passCodeLearned = passCodeLearned
        self.prepareAudit = prepareAudit
        self.auditDelivered = auditDelivered
        self.configurationReceived = configurationReceived
        self.sessionFailed = sessionFailed
        self.linkChanged = linkChanged
        self.warning = warning
    }
}

/// The machine's DEX port: `DEXMachineLink` (DEX/UCS) or `DDCMPSlaveLink` (DDCMP) on a thread of
/// its own over the configured serial port (or `unix:` socket), reopened with a backoff when the
/// device goes away. A session starts when a handheld speaks (or, configured so, answers the
/// machine's bid); no button.
public final class DEXPort: Sendable {
    public let settings: DEXSettings
    public let address: PortAddress
    private let control: DriverControl
    private let handlers: DEXPortHandlers
    private let started = Mutex(false)

    public init(settings: DEXSettings, timekeeper: any Timekeeper, handlers: DEXPortHandlers) {
        self.settings = settings
        address = PortAddress(settings.port, baudRate: settings.baudRate)
        control = DriverControl(timekeeper: timekeeper)
        self.handlers = handlers
    }

    public var description: String {
        let bidding = settings.linkProtocol == .dexUCS && settings.machineMakesFirstHandshake ? ", bidding for the first handshake" : ""
        return "\(settings.linkProtocol.name) on \(address) as \(settings.communicationID)\(bidding)"
    }

    public func start() {
        let alreadyStarted = started.withLock { started in
            defer { started = true }
            return started
        }
        guard !alreadyStarted else { return }
        PosixThread.start(name: "vendd-dex") { [self] in
            run()
            control.markFinished()
        }
    }

    /// Ends a session under way (the handheld times out) and closes the port.
    public func stop() async {
        guard started.withLock({ $0 }) else { return }
        await control.stop()
    }

    /// The link's clock: whole milliseconds since `origin`, rounded down for timers and bytes due
    /// (a deadline is reached only once the real time has reached it), rounded up for the time
    /// bytes came in (a turnaround counted from it is never short). EVA-DTS 6.1.1 asks for
    /// minimums: "wait a minimum of 10 milliseconds before answering" and "pause a minimum of
    /// 100 milliseconds" (p.114), "minimum turn around time in the receiver 40ms" (p.64):
    /// with both rounded down, an answer could go up to a millisecond early.
    static func milliseconds(_ elapsed: Duration, roundingUp: Bool = false) -> Int64 {
        let (seconds, attoseconds) = elapsed.components
        let perMillisecond: Int64 = 1_000_000_000_000_000
        let whole = seconds * 1_000 + attoseconds / perMillisecond
        return roundingUp && attoseconds % perMillisecond != 0 ? whole + 1 : whole
    }

    private func milliseconds(since origin: ContinuousClock.Instant, roundingUp: Bool = false) -> Int64 {
        Self.milliseconds(control.timekeeper.now - origin, roundingUp: roundingUp)
    }

    private func run() {
        switch settings.linkProtocol {
        case .dexUCS:
            var link = UCSPortLink(
                link: DEXMachineLink(
                    communicationID: settings.communicationID, firstHandshakeSide: settings.machineMakesFirstHandshake ? .machine : .handheld,
                    now: 0))
            run(&link)
        case .ddcmp:
            var link = DDCMPPortLink(link: DDCMPSlaveLink(serialNumber: settings.communicationID, baudRate: settings.baudRate))
            run(&link)
        }
    }

    private func run<Link: DEXPortLink>(_ link: inout Link) {
        let origin = control.timekeeper.now
        var stream: (any ByteStream)?
        var backoff = Backoff()
        var downReason: String?
        while !control.isStopping {
            guard let open = stream else {
                do {
                    stream = try address.open()
                    backoff.reset()
                    downReason = nil
                    handlers.linkChanged("DEX port \(address) open (\(settings.linkProtocol.name))", true)
                } catch {
                    if downReason != error.description { handlers.linkChanged("DEX port: \(error)", false) }
                    downReason = error.description
                    control.sleep(backoff.next())
                }
                continue
            }
            let wait = link.nextDeadline.map { max(0, $0 - milliseconds(since: origin)) } ?? 1_000
            let outcome = control.waiter.wait(for: open.fileDescriptor, timeout: .milliseconds(wait))
            do throws(LinkError) {
                if outcome == .readable || outcome == .hangUp {
                    let bytes = try open.readAvailable()
                    link.receive(bytes, at: milliseconds(since: origin, roundingUp: true), handlers)
                }
                link.advance(to: milliseconds(since: origin), handlers)
                let output = link.takeOutput(at: milliseconds(since: origin))
                if !output.isEmpty {
                    try open.write(output)
                    // A pause counted from the end of a session starts once its EOT is written.
                    link.wrote(at: milliseconds(since: origin, roundingUp: true))
                }
            } catch {
                link.disconnected(at: milliseconds(since: origin), reason: error.description, handlers)
                open.close()
                stream = nil
                handlers.linkChanged("DEX port: \(error)", false)
                downReason = error.description
                // Not at once: a device that drops every connection would be reopened in a loop.
                control.sleep(backoff.next())
            }
        }
        stream?.close()
    }
}

/// One protocol's link on the port's thread: bytes and timers in, bytes out, what happened told
/// to the handlers.
private protocol DEXPortLink {
    var nextDeadline: Int64? { get }
    mutating func receive(_ bytes: [UInt8], at now: Int64, _ handlers: DEXPortHandlers)
    mutating func advance(to now: Int64, _ handlers: DEXPortHandlers)
    mutating func takeOutput(at now: Int64) -> [UInt8]
    /// What `takeOutput` gave is on the wire at `now`.
    mutating func wrote(at now: Int64)
    mutating func disconnected(at now: Int64, reason: String, _ handlers: DEXPortHandlers)
}

/// DEX/UCS: `DEXMachineLink` and who the session under way is with.
private struct UCSPortLink: DEXPortLink {
    var link: DEXMachineLink
    var handheld: DEXFirstHandshake?

    var nextDeadline: Int64? { link.nextDeadline }
    mutating func receive(_ bytes: [UInt8], at now: Int64, _ handlers: DEXPortHandlers) { handle(link.receive(bytes, at: now), handlers) }
    mutating func advance(to now: Int64, _ handlers: DEXPortHandlers) { handle(link.advance(to: now), handlers) }
    mutating func takeOutput(at now: Int64) -> [UInt8] { link.takeOutput(at: now) }
    mutating func wrote(at now: Int64) { link.wrote(at: now) }
    mutating func disconnected(at now: Int64, reason: String, _ handlers: DEXPortHandlers) {
        handle(link.disconnected(at: now, reason: reason), handlers)
    }

    private mutating func handle(_ events: [DEXLinkEvent], _ handlers: DEXPortHandlers) {
        for event in events {
            switch event {
            case .handshake(let handshake, let machineFirst):
                handheld = handshake
                if machineFirst || handshake.operation == .readAudit, let audit = handlers.prepareAudit(handshake) {
                    link.supplyAudit(audit)
                }
            case .auditDelivered(let audit):
                if let handheld { handlers.auditDelivered(handheld, audit) }
                handheld = nil
            case .configurationReceived(let text):
                if let handheld { handlers.configurationReceived(handheld, text) }
                handheld = nil
            case .failed(let stage, let reason):
                handlers.sessionFailed(handheld, stage, reason)
                handheld = nil
            case .warning(let message):
                handlers.warning("DEX \(handheld?.communicationID ?? "handheld"): \(message)")
            }
        }
    }
}

/// DDCMP: `DDCMPSlaveLink`, and the master it serves named as the handlers know handhelds: a
/// first handshake asking to read, with "DDCMP" and who the master said it was as its ID.
private struct DDCMPPortLink: DEXPortLink {
    var link: DDCMPSlaveLink
    var handheld: DEXFirstHandshake?

    var nextDeadline: Int64? { link.nextDeadline }
    mutating func receive(_ bytes: [UInt8], at now: Int64, _ handlers: DEXPortHandlers) {
        // The kept code as the machine's durable state has it now: a technician may have cleared
        // it since the last session, and one learnt but not journaled is not kept.
        link.passCode = handlers.passCode()
        handle(link.receive(bytes, at: now), at: now, handlers)
    }
    mutating func advance(to now: Int64, _ handlers: DEXPortHandlers) { handle(link.advance(to: now), at: now, handlers) }
    mutating func takeOutput(at now: Int64) -> [UInt8] { link.takeOutput(at: now) }
    // DDCMP's turnaround is counted from what the slave heard; nothing is counted from a write.
    mutating func wrote(at now: Int64) {}
    mutating func disconnected(at now: Int64, reason: String, _ handlers: DEXPortHandlers) {
        handle(link.disconnected(at: now, reason: reason), at: now, handlers)
    }

    private static func name(_ handheld: DDCMPHandheld?) -> DEXFirstHandshake {
        DEXFirstHandshake(communicationID: "DDCMP \(handheld?.description ?? "master")", operation: .readAudit, revision: "DDCMP")
    }

    private mutating func handle(_ events: [DDCMPLinkEvent], at now: Int64, _ handlers: DEXPortHandlers) {
        for event in events {
            switch event {
            case .handheld(let master):
                handheld = Self.name(master)
            case .passCodeLearned(let code, let master):
                handlers.passCodeLearned(code, Self.name(master))
            case .readRequested:
                let who = handheld ?? Self.name(nil)
                handheld = who
                link.supplyAudit(handlers.prepareAudit(who), at: now)
            case .auditDelivered(let audit, let resetsInterim):
                let who = handheld ?? Self.name(nil)
                if resetsInterim { handlers.auditDelivered(who, audit) } else { handlers.auditCopied(who, audit) }
                handheld = nil
            case .failed(let stage, let reason):
                handlers.sessionFailed(handheld, stage, reason)
                handheld = nil
            case .warning(let message):
                handlers.warning("DEX \(handheld?.communicationID ?? "DDCMP master"): \(message)")
            }
        }
    }
}
