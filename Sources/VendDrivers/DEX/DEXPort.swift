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
    /// The handheld sent a configuration and ended its session properly.
    public var configurationReceived: @Sendable (_ handheld: DEXFirstHandshake, _ text: [UInt8]) -> Void
    /// A session ended without its transfer (`handheld` nil: before a first handshake was read).
    public var sessionFailed: @Sendable (_ handheld: DEXFirstHandshake?, _ stage: String, _ reason: String) -> Void
    /// The port opened (`open`) or went away, with what to log.
    public var linkChanged: @Sendable (_ message: String, _ open: Bool) -> Void
    /// A session had a hiccup it recovers from (a block NAKed, a retry).
    public var warning: @Sendable (_ message: String) -> Void

    public init(
        prepareAudit: @escaping @Sendable (DEXFirstHandshake) -> [UInt8]?,
        auditDelivered: @escaping @Sendable (DEXFirstHandshake, [UInt8]) -> Void,
        configurationReceived: @escaping @Sendable (DEXFirstHandshake, [UInt8]) -> Void,
        sessionFailed: @escaping @Sendable (DEXFirstHandshake?, String, String) -> Void,
        linkChanged: @escaping @Sendable (String, Bool) -> Void, warning: @escaping @Sendable (String) -> Void
    ) {
        self.prepareAudit = prepareAudit
        self.auditDelivered = auditDelivered
        self.configurationReceived = configurationReceived
        self.sessionFailed = sessionFailed
        self.linkChanged = linkChanged
        self.warning = warning
    }
}

/// The machine's DEX port: `DEXMachineLink` on a thread of its own over the configured serial
/// port (or `unix:` socket), reopened with a backoff when the device goes away. A session starts
/// when a handheld speaks (or, configured so, answers the machine's bid); no button.
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
        "DEX/UCS on \(address) as \(settings.communicationID)\(settings.machineMakesFirstHandshake ? ", bidding for the first handshake" : "")"
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

    private func milliseconds(since origin: ContinuousClock.Instant) -> Int64 {
        let elapsed = control.timekeeper.now - origin
        return elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }

    private func run() {
        let origin = control.timekeeper.now
        var link = DEXMachineLink(
            communicationID: settings.communicationID, firstHandshakeSide: settings.machineMakesFirstHandshake ? .machine : .handheld, now: 0)
        var session = Session()
        var stream: (any ByteStream)?
        var backoff = Backoff()
        var downReason: String?
        while !control.isStopping {
            guard let open = stream else {
                do {
                    stream = try address.open()
                    backoff.reset()
                    downReason = nil
                    handlers.linkChanged("DEX port \(address) open", true)
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
                    session.handle(link.receive(bytes, at: milliseconds(since: origin)), &link, handlers)
                }
                session.handle(link.advance(to: milliseconds(since: origin)), &link, handlers)
                let output = link.takeOutput(at: milliseconds(since: origin))
                if !output.isEmpty { try open.write(output) }
            } catch {
                session.handle(link.disconnected(at: milliseconds(since: origin), reason: error.description), &link, handlers)
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

    /// Who the session under way is with, for the handlers.
    private struct Session {
        var handheld: DEXFirstHandshake?

        mutating func handle(_ events: [DEXLinkEvent], _ link: inout DEXMachineLink, _ handlers: DEXPortHandlers) {
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
}
