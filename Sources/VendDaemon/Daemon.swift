import Dispatch
import Logging
import Synchronization
import VendConfig
import VendControl
import VendDrivers
import VendHardware
import VendPOSIX
import VendStore
import VendSystemd
import VendTime
import VendingCore

#if canImport(Glibc)
    import Glibc
#endif

public struct DaemonOptions: Sendable {
    public var configPath: String
    public var simulate: Bool
    public var stateDirectory: String?
    public var socketPath: String?
    public var resetState: Bool
    /// With `simulate`: the file every simulated line change is appended to (`LineChangeLog`).
    public var lineLog: String?

    public init(configPath: String, simulate: Bool, stateDirectory: String?, socketPath: String?, resetState: Bool, lineLog: String? = nil) {
        self.lineLog = lineLog
        self.configPath = configPath
        self.simulate = simulate
        self.stateDirectory = stateDirectory
        self.socketPath = socketPath
        self.resetState = resetState
    }
}

/// sysexits(3) codes, so systemd can tell a file to fix from a crash to restart after.
public enum ExitStatus {
    public static let ok: Int32 = 0
    public static let dataError: Int32 = 65  // EX_DATAERR: persisted state is corrupt
    public static let unavailable: Int32 = 69  // EX_UNAVAILABLE: hardware cannot be used
    public static let cannotCreate: Int32 = 73  // EX_CANTCREAT: state or socket cannot be created
    public static let temporaryFailure: Int32 = 75  // EX_TEMPFAIL: another vendd holds the state or the socket
    public static let configError: Int32 = 78  // EX_CONFIG
}

/// The daemon's life: start-up, the signal loop (SIGHUP reloads, SIGTERM/SIGINT stop), shutdown.
public enum Daemon {
    public static func run(_ options: DaemonOptions) async -> Int32 {
        let logWriter = JournaldLogHandler.bootstrap(level: .info)
        defer { logWriter.flush() }
        let logger = Logger(label: "vendd")
        let notifier = SystemdNotifier()
        let signals = SignalSource([SIGTERM, SIGINT, SIGHUP])
        let startedAt = ContinuousClock.now

        let timekeeper = SystemTimekeeper()
        // SCHED_FIFO 1, above every ordinary thread: a pulse ends when due on a busy board, not
        // when the scheduler next gives the relay lane a core.
        let relayTimers = SystemTimekeeper(threadName: "vendd-relays", neverWaits: true, realTimePriority: 1)
        if let refusal = relayTimers.realTimeRefusal {
            logger.warning(
                "relay lane without real-time priority (\(refusal)): a relay pulse may end a few ms late while the board is busy; vendd.service grants it (LimitRTPRIO=1, RestrictRealtime=no)"
            )
        }
        let startup: Startup
        switch await Startup.begin(options, timekeeper: timekeeper, relayTimers: relayTimers, logger: logger) {
        case .success(let ready): startup = ready
        case .failure(let failure):
            logger.critical("\(failure.message)")
            return failure.status
        }
        let controller = startup.controller
        // Every second: the machine's tick (vend timeouts, a storage fault's retry), and the
        // watchdog fed if the machine's lane carried out the last ones (`MachineWatchdog`).
        let ticking = Mutex(true)
        let watchdog = MachineWatchdog(notifier: notifier, timekeeper: timekeeper, logger: logger)
        timekeeper.repeatEvery(.seconds(1)) {
            guard ticking.withLock({ $0 }) else { return false }
            watchdog.beat(controller)
            return true
        }
        let startUpTime = ContinuousClock.now - startedAt
        let status = statusLine(controller)
        notifier.ready(status: status)
        logger.notice(
            "vendd ready in \(startUpTime.wholeMilliseconds) ms: \(status)",
            metadata: ["STARTUP_MS": "\(startUpTime.wholeMilliseconds)"])
        if notifier.watchdogInterval == nil, notifier.isActive {
            logger.info("systemd watchdog not enabled (WatchdogSec= unset)")
        }

        for await signal in signals.stream {
            if signal == SIGHUP {
                await Reload.perform(options, controller: controller, logger: logger, notifier: notifier)
                continue
            }
            logger.notice("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"): stopping")
            break
        }

        let stoppingAt = ContinuousClock.now
        notifier.stopping()
        ticking.withLock { $0 = false }
        await startup.dex?.stop()
        controller.climate.withLock { $0 }?.stop()
        await Shutdown.perform(controller: controller, server: startup.server, logger: logger)
        startup.fleet?.stop()
        controller.closeStore()
        let stopTime = ContinuousClock.now - stoppingAt
        logger.notice("vendd stopped in \(stopTime.wholeMilliseconds) ms; state saved", metadata: ["STOP_MS": "\(stopTime.wholeMilliseconds)"])
        return ExitStatus.ok
    }

    static func statusLine(_ controller: MachineController) -> String { statusLine(controller.status()) }

    /// "in-service, credit 0원, 8/10 slots stocked (2 of them locked by zone chilled's food-safety
    /// check: vendctl zone service chilled)": a stocked slot that cannot sell says why.
    static func statusLine(_ status: StatusReport) -> String {
        let stocked = status.slots.filter { $0.stock > 0 }
        var held: [String] = []
        let locked = Dictionary(grouping: stocked.filter { $0.healthLock != nil }, by: { $0.healthLock! })
        for zone in locked.keys.sorted() {
            let slots = locked[zone]!.map(\.id).joined(separator: ", ")
            held.append("\(slots) locked by zone \(zone)'s food-safety check (vendctl zone service \(zone))")
        }
        for slot in stocked where slot.healthLock == nil {
            if let fault = slot.fault { held.append("\(slot.id) locked by a motor fault, \(fault) (vendctl slot clear \(slot.id))") }
        }
        let heldText = held.isEmpty ? "" : "; not selling: \(held.joined(separator: "; "))"
        return
            "\(status.state), credit \(status.creditText), \(stocked.count)/\(status.slots.count) slots stocked\(heldText)\(status.simulated ? ", simulated hardware" : "")"
    }
}

/// Signals as an async stream: the handlers do nothing but hand the signal over.
final class SignalSource {
    let stream: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    init(_ numbers: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .unbounded)
        self.stream = stream
        sources = numbers.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }
}

extension Daemon {
    /// `vendd reset-state`: moves the saved state aside so that the next start is an empty machine.
    /// The lock makes sure no vendd is running on the directory meanwhile.
    public static func resetState(configPath: String, stateDirectory: String?) -> Int32 {
        let directory: String
        if let stateDirectory {
            directory = stateDirectory
        } else {
            do {
                directory = try ConfigLoader.load(file: configPath).stateDirectory
            } catch {
                StandardError.write(error.description + "\n")
                return ExitStatus.configError
            }
        }
        do {
            let store = try MachineStore(directory: directory)
            defer { store.close() }
            if let problem = OutboxFile.keepThroughReset(store) { StandardError.write("vendd reset-state: \(problem)\n") }
            let movedTo = try store.reset()
            print(
                "state reset: the next start is an empty machine (no credit, no stock, no sales)"
                    + (movedTo.map { "; the previous state is in \($0)" } ?? ""))
            print("count the cash box and restock before putting the machine back in service")
            return ExitStatus.ok
        } catch {
            StandardError.write("\(error)\n")
            return error == .locked(directory: directory) ? ExitStatus.temporaryFailure : ExitStatus.cannotCreate
        }
    }
}
