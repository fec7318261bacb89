import FoundationEssentials
import Logging
import Synchronization
import VendConfig
import VendControl
import VendDEX
import VendDrivers
import VendSettings
import VendTelemetry
import VendingCore

/// The machine's end of the DEX port: makes the audit a handheld reads, resets the interim
/// figures once it acknowledged all of it (a journaled input, like any state change), applies
/// the prices it sends through the same path as `vendctl price`, and says what each session did
/// in the log, in `vendctl status` and to the fleet. It holds the machine only as
/// `MachineRequests`: on the port's own thread it reads the published view and waits for each
/// input's outcome.
final class DEXService: Sendable {
    private let port: DEXPort

    /// The audit on the wire and the totals it holds: what the reset records if it arrives.
    private struct PendingRead {
        let handheld: String
        let text: [UInt8]
        let totals: AuditTotals
    }

    /// Who read, as EA304/EA307 name the terminal: a DEX/UCS handheld's communication ID, a
    /// DDCMP master's user ID (or "DDCMP" when it sends none).
    static func terminal(_ handheld: DEXFirstHandshake) -> String {
        guard handheld.revision == "DDCMP" else { return handheld.communicationID }
        let parts = handheld.communicationID.split(separator: "'", omittingEmptySubsequences: false)
        return parts.count >= 3 && !parts[1].isEmpty ? String(parts[1]) : "DDCMP"
    }

    init(settings: DEXSettings, machine: MachineRequests, sessions: DEXSessionLog, outbox: Outbox?, logger: Logger) {
        let pending = Mutex<PendingRead?>(nil)
        sessions.configure(
            port: "\(settings.port) as \(settings.communicationID)\(settings.linkProtocol == .ddcmp ? " (DDCMP)" : "")")
        @Sendable func record(_ handheld: DEXFirstHandshake?, _ result: String, _ detail: String, level: Logger.Level) {
            let who = handheld?.communicationID ?? "unknown handheld"
            let operation = handheld.map(Self.operation) ?? "none"
            logger.log(
                level: level, "DEX \(who) \(operation): \(result): \(detail)",
                metadata: ["DEX_HANDHELD": "\(who)", "DEX_OPERATION": "\(operation)", "DEX_RESULT": "\(result)"])
            let now = machine.timekeeper.wallClockMilliseconds
            sessions.record(
                StatusReport.DEXSession(at: now, handheld: handheld?.communicationID, operation: operation, result: result, detail: detail))
            if let outbox {
                machine.journal([outbox.event(.dexSession, reason: "\(who) \(operation): \(result): \(detail)", at: now)])
            }
        }
        port = DEXPort(
            settings: settings, timekeeper: machine.timekeeper,
            handlers: DEXPortHandlers(
                prepareAudit: { handheld in
                    let reports = machine.view.reports
                    do {
                        var audit = try DEXAudit(
                            reports.sales(since: nil, at: machine.now), communicationID: settings.communicationID, asset: settings.assetNumber)
                        audit.reads.terminal = Self.terminal(handheld)
                        let text = Array(DEXWriter.file(audit).utf8)
                        pending.withLock {
                            $0 = PendingRead(handheld: handheld.communicationID, text: text, totals: reports.machine.auditTotals)
                        }
                        return text
                    } catch {
                        logger.error("DEX \(handheld.communicationID): no audit can be made: \(error)")
                        return nil
                    }
                },
                auditDelivered: { handheld, text in
                    guard
                        let read = pending.withLock({ read in
                            defer { read = nil }
                            return read
                        }), read.text == text
                    else {
                        return record(handheld, "failed", "an audit was acknowledged that vendd did not prepare; nothing reset", level: .error)
                    }
                    let outcome = machine.request(.dexRead(DEXRead(totals: read.totals, terminal: Self.terminal(handheld), mayReset: true)))
                    let summary = "\(text.count) bytes acknowledged to the last block; paid vends in all: \(read.totals.sales.count)"
                    guard let before = outcome?.before.machine.dex, let after = outcome?.after.machine.dex, after.reads != before.reads else {
                        return record(handheld, "delivered", "\(summary); the read could not be journaled: nothing reset", level: .error)
                    }
                    if before.intervalMode == .save {
                        record(
                            handheld, "delivered", "\(summary); SD105 is SAVE: interim figures NOT reset (a handheld's SD105 RESET resets them)",
                            level: .notice)
                    } else if after.resets > before.resets {
                        record(handheld, "delivered", "\(summary); interim figures reset (SD105 AUTO)", level: .notice)
                    } else {
                        record(handheld, "delivered", "\(summary); interim figures NOT reset (the reset could not be journaled)", level: .error)
                    }
                },
                configurationReceived: { handheld, text in
                    let (applied, refused) = Self.apply(DEXConfiguration(text: text), from: handheld, machine: machine)
                    let detail =
                        "\(applied.count) setting(s) applied\(applied.isEmpty ? "" : " (\(applied.joined(separator: "; ")))")"
                        + (refused.isEmpty ? "" : ", \(refused.count) refused (\(refused.joined(separator: "; ")))")
                    record(handheld, refused.isEmpty ? "configured" : "configured with refusals", detail, level: refused.isEmpty ? .notice : .warning)
                },
                sessionFailed: { handheld, stage, reason in
                    pending.withLock { $0 = nil }
                    record(handheld, "failed", "\(stage): \(reason); nothing reset or applied", level: .warning)
                },
                linkChanged: { message, open in
                    sessions.setOpen(open)
                    logger.log(level: open ? .info : .warning, "\(message)")
                },
                warning: { message in logger.warning("\(message)") },
                auditCopied: { handheld, text in
                    let read = pending.withLock { read in
                        defer { read = nil }
                        return read
                    }
                    if let read, read.text == text {
                        _ = machine.request(.dexRead(DEXRead(totals: read.totals, terminal: Self.terminal(handheld), mayReset: false)))
                    }
                    record(
                        handheld, "delivered", "\(text.count) bytes acknowledged (security read): interim figures left as they are", level: .notice)
                },
                passCode: { machine.view.machine.dex.passCode },
                passCodeLearned: { code, handheld in
                    let kept = machine.request(.setDEXPassCode(code, by: handheld.communicationID))?.after.machine.dex.passCode == code
                    logger.log(
                        level: kept ? .notice : .error,
                        "DEX \(handheld.communicationID): security and pass code \(kept ? "learnt and kept" : "learnt but NOT journaled"); only it reads from now on (vendctl dex clear-pass-code forgets it)",
                        metadata: ["DEX_HANDHELD": "\(handheld.communicationID)"])
                }))
    }

    var description: String { port.description }

    /// The port for `config`, started; in simulation only on a `unix:` port (the simulator).
    static func start(
        _ config: VenddConfig, simulate: Bool, machine: MachineRequests, sessions: DEXSessionLog, outbox: Outbox?, logger: Logger
    ) -> DEXService? {
        guard let settings = config.dex else { return nil }
        guard !simulate || settings.port.hasPrefix("unix:") else {
            logger.notice("DEX port \(settings.port) not opened in simulation (only a unix: port is)")
            return nil
        }
        let service = DEXService(settings: settings, machine: machine, sessions: sessions, outbox: outbox, logger: logger)
        service.start()
        logger.notice("\(service.description)")
        return service
    }

    /// What a reload cannot change under a running port.
    static func identity(_ settings: DEXSettings) -> String {
        "\(settings.port) \(settings.baudRate) \(settings.communicationID) \(settings.assetNumber) \(settings.machineMakesFirstHandshake) \(settings.linkProtocol)"
    }

    func start() { port.start() }
    func stop() async { await port.stop() }

    static func operation(_ handheld: DEXFirstHandshake) -> String {
        switch handheld.operation {
        case .readAudit: "read"
        case .send: "configure"
        case .manufacturer, nil: "operation '\(String(decoding: [handheld.operationByte], as: UTF8.self))'"
        }
    }

    /// Each price through `CommandHandler.setPrice`, as `vendctl price` sends it (with `--list`
    /// and `--payment` for LA1 and PA7): what is refused there (an unknown slot or list, a price
    /// the machine cannot take) is refused here, each with its reason. A file whose ID4 names
    /// other decimals than the machine's is refused whole.
    /// SD1: the pass code changes only with the code in use as SD101 (§6.1.6: "any further
    /// configuration transmission … that contains an SD1 element may overwrite the stored
    /// code"); a file whose SD101 is not the kept code is refused whole. SD105/SD106 are kept or,
    /// RESET, carried out: the transfer has completed ("All interval data will be reset after the
    /// current successful SD105 transfer", p.42).
    static func apply(
        _ configuration: DEXConfiguration, from handheld: DEXFirstHandshake, machine: MachineRequests
    ) -> (applied: [String], refused: [String]) {
        var applied: [String] = [], refused = configuration.refused.map { "\($0.segment): \($0.reason)" }
        let view = machine.view
        let kept = view.machine.dex.passCode
        if let kept, let current = configuration.currentPassword, current != kept {
            return ([], refused + ["SD101 is not the pass code the machine keeps: nothing applied"])
        }
        if let new = configuration.newPassword {
            if kept != nil, configuration.currentPassword == nil {
                refused.append("SD102 without SD101: the pass code is changed only with the one in use")
            } else {
                let outcome = machine.request(.setDEXPassCode(new, by: handheld.communicationID))
                let expected: [UInt8]? = new.allSatisfy { $0 == 0 } ? nil : new
                if let outcome, outcome.after.machine.dex.passCode == expected {
                    applied.append(expected == nil ? "pass code cleared (SD102 zero)" : "pass code changed (SD102)")
                } else {
                    refused.append("SD102: the new pass code could not be journaled")
                }
            }
        }
        if configuration.intervalReset != nil || configuration.eventReset != nil {
            let outcome = machine.request(
                .dexResetControl(
                    interval: configuration.intervalReset.flatMap { DEXResetCommand(rawValue: $0.rawValue) },
                    events: configuration.eventReset.flatMap { DEXResetCommand(rawValue: $0.rawValue) }))
            let before = (outcome?.before ?? view).machine.dex, after = (outcome?.after ?? view).machine.dex
            if let control = configuration.intervalReset {
                applied.append(
                    control == .reset
                        ? (after.resets > before.resets ? "SD105 RESET: interim figures reset" : "SD105 RESET could not be journaled")
                        : "SD105 \(after.intervalMode.rawValue)")
            }
            if let control = configuration.eventReset {
                applied.append(control == .reset ? "SD106 RESET: events reset" : "SD106 \(after.eventMode.rawValue)")
            }
        }
        if configuration.selectiveIgnored { applied.append("SD103/SD104 not supported: every figure is read and reset") }
        let currency = view.config.machine.currency
        if let decimals = configuration.decimalPlaces, decimals != currency.minorDigits {
            return (
                [], refused + ["ID4 says \(decimals) decimal places, the machine's \(currency.code) has \(currency.minorDigits): no price applied"]
            )
        }
        for price in configuration.prices {
            let amount = Money(minorUnits: price.minorUnits, currency: currency).decimalString
            let scope = price.payment.flatMap(PriceScope.init(rawValue:)) ?? .any
            let response = CommandHandler.setPrice(price.selection, amount, list: price.list, scope: scope, machine: machine)
            if response.ok {
                applied.append(response.message ?? "slot \(price.selection) \(amount)")
            } else {
                refused.append("\(price.segment): \(response.error?.message ?? "refused")")
            }
        }
        return (applied, refused)
    }
}

/// The DEX port's state for `vendctl status`: written by the port's thread, read by status.
final class DEXSessionLog: Sendable {
    private struct State {
        var port: String?
        var open = false
        var sessions: [StatusReport.DEXSession] = []
    }

    /// The sessions `vendctl status` lists.
    static let kept = 10
    private let state = Mutex(State())

    func configure(port: String) { state.withLock { $0.port = port } }
    func setOpen(_ open: Bool) { state.withLock { $0.open = open } }

    func record(_ session: StatusReport.DEXSession) {
        state.withLock { state in
            state.sessions.append(session)
            if state.sessions.count > Self.kept { state.sessions.removeFirst(state.sessions.count - Self.kept) }
        }
    }

    var status: StatusReport.DEXPort? {
        state.withLock { state in state.port.map { StatusReport.DEXPort(port: $0, open: state.open, sessions: state.sessions) } }
    }
}
