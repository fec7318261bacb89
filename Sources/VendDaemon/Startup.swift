import FoundationEssentials
import Logging
import VendConfig
import VendControl
import VendDrivers
import VendGPIO
import VendHardware
import VendPOSIX
import VendStore
import VendTime
import VendingCore

#if canImport(Glibc)
    import Glibc
#endif

struct StartupFailure: Error {
    let status: Int32
    let message: String
}

/// Start-up in the order that keeps money safe: validate the configuration, restore the state,
/// resolve a vend that was in flight, bring the hardware up with every relay off, then listen.
struct Startup {
    let controller: MachineController
    let server: ControlServer
    /// The MQTT link; nil without an `mqtt:` section.
    let fleet: FleetLink?
    /// The DEX port; nil without a `dex:` section.
    var dex: DEXService? = nil

    /// `relayTimers` runs the dispenser's timers on a thread of their own, apart from everything
    /// that may wait on storage.
    static func begin(_ options: DaemonOptions, timekeeper: any Timekeeper, relayTimers: any Timekeeper, logger: Logger) async -> Result<
        Startup, StartupFailure
    > {
        let config: VenddConfig
        do {
            config = try ConfigLoader.load(file: options.configPath)
        } catch {
            for diagnostic in error.diagnostics { logger.error("\(diagnostic)") }
            return .failure(
                StartupFailure(
                    status: ExitStatus.configError,
                    message: "\(options.configPath): \(error.diagnostics.count) configuration error(s); not starting"))
        }

        let groups = config.controlGroupProblems { getgrnam($0) != nil }
        for problem in groups.errors.map(\.description) + groups.notes { logger.warning("\(problem)") }
        let socketPath = options.socketPath ?? config.control.socketPath
        // Before the state and the hardware: a vendd already serving this socket keeps it.
        if let other = UnixSocket.listener(at: socketPath) { return .failure(socketInUse(socketPath, by: other)) }

        let stateDirectory = options.stateDirectory ?? config.stateDirectory
        let store: MachineStore
        do {
            store = try MachineStore(directory: stateDirectory)
            if options.resetState {
                if let problem = OutboxFile.keepThroughReset(store) { logger.error("--reset-state: \(problem)") }
                let movedTo = try store.reset()
                let where_ = movedTo.map { "; the previous state was moved to \($0)" } ?? ""
                logger.warning("--reset-state: starting with an empty machine (no credit, no stock, no sales)\(where_)")
            }
        } catch {
            let status = error == .locked(directory: stateDirectory) ? ExitStatus.temporaryFailure : ExitStatus.cannotCreate
            return .failure(StartupFailure(status: status, message: "\(error)"))
        }

        let outbox = config.mqtt.map {
            Outbox(
                machine: $0.machineID, currency: config.machine.currency, keepDays: $0.outboxDays,
                keepsEvents: $0.publish.contains(.events), keepUntilStored: $0.keepUntilStored, logger: logger)
        }
        let restored: RestoredMachine
        switch restore(from: store, config: config, outbox: outbox, now: timekeeper.wallClockMilliseconds, logger: logger) {
        case .success(let value): restored = value
        case .failure(let failure): return .failure(failure)
        }
        let machine = restored.machine
        let controller = MachineController(
            machine: machine, store: store, config: config, logger: logger, timekeeper: timekeeper,
            relayTimers: relayTimers, outbox: outbox)
        let interruptedVendSlot = controller.resolveInterruptedVend()
        // An age check's approval never survives a restart (the customer may have gone): ended, journaled.
        if controller.currentMachine.ageCheck != nil { controller.sendAndWait(.ageCheckVoided) }
        if let rejection = controller.reconfigure(to: config) {
            return .failure(
                StartupFailure(
                    status: ExitStatus.configError,
                    message: "\(options.configPath) cannot be applied to the saved state: \(rejection)"))
        }
        controller.compactAtStart(snapshotIsCurrent: restored.snapshotIsCurrent)

        do {
            let hardware = try bringUpHardware(config, options: options, controller: controller, logger: logger)
            controller.attach(hardware, interruptedVendSlot: interruptedVendSlot)
        } catch {
            return .failure(StartupFailure(status: (error as? HardwareError)?.exitStatus ?? ExitStatus.unavailable, message: "\(error)"))
        }

        // The zones read before the socket answers, so the first status already shows them.
        let climate: ClimateService?
        do {
            climate = try ClimateService.start(
                config, simulate: options.simulate, chips: zoneChips(config, simulate: options.simulate, timekeeper: controller.timekeeper),
                machine: controller.inputs, timekeeper: controller.timekeeper, logger: logger)
        } catch {
            await controller.detachHardware()
            return .failure(StartupFailure(status: ExitStatus.unavailable, message: "\(error)"))
        }
        controller.climate.withLock { $0 = climate }
        do {
            let server = try ControlServer(
                path: socketPath, logger: logger, timekeeper: controller.timekeeper,
                handler: { request, peer in CommandHandler.handle(request, peer: peer, controller: controller) },
                events: controller.events)
            server.start()
            return .success(
                Startup(
                    controller: controller, server: server, fleet: startFleetLink(config, outbox: outbox, controller: controller, logger: logger),
                    dex: DEXService.start(
                        config, simulate: options.simulate, machine: controller.requests, sessions: controller.dexSessions,
                        outbox: controller.outbox, logger: logger)))
        } catch {
            climate?.stop()
            await controller.detachHardware()
            if case .inUse(_, let other) = error { return .failure(socketInUse(socketPath, by: other)) }
            return .failure(
                StartupFailure(
                    status: ExitStatus.cannotCreate,
                    message: "control socket \(socketPath): \(error) (is its directory there and writable?)"))
        }
    }

    /// Another program (a running vendd) answers on the control socket: taking its socket over
    /// would cut vendctl and the display off from it.
    static func socketInUse(_ path: String, by other: UnixSocket.Listener) -> StartupFailure {
        StartupFailure(
            status: ExitStatus.temporaryFailure,
            message:
                "control socket \(path): \(other) answers on it (a vendd already running?); not starting, and its socket is left alone. Stop that vendd first, or give this one a socket of its own (--socket, or control.socket in the configuration)"
        )
    }

    /// The machine the files hold, and whether they hold it as a snapshot alone: one read whole,
    /// with no journal record after it and nothing repaired on the way.
    struct RestoredMachine {
        let machine: Machine
        let snapshotIsCurrent: Bool
    }

    /// The last snapshot plus the journal replayed over it; a fresh machine on first start.
    static func restore(
        from store: MachineStore, config: VenddConfig, outbox: Outbox?, now: Int64, logger: Logger
    ) -> Result<RestoredMachine, StartupFailure> {
        let restored: Restored<MachineSnapshot, JournalEntry>
        do {
            restored = try store.restore()
        } catch {
            return .failure(StartupFailure(status: ExitStatus.dataError, message: "\(error)"))
        }
        for note in restored.notes { logger.warning("state: \(note)") }
        if let outbox {
            do {
                try outbox.restore(saved: store.readCompanion(Outbox.fileName), journaled: restored.entries.flatMap { $0.outbox ?? [] }, now: now)
            } catch {
                return .failure(
                    StartupFailure(
                        status: ExitStatus.dataError,
                        message:
                            "\(store.directory)/\(Outbox.fileName) cannot be read (\(error)): it holds events the fleet has not received. Move it aside to start without them"
                    ))
            }
        }
        if restored.isFresh {
            logger.notice("no saved state in \(store.directory): starting a new machine (no credit, no stock)")
            return .success(RestoredMachine(machine: Machine(setup: config.machineSetup), snapshotIsCurrent: false))
        }
        if let snapshot = restored.snapshot, snapshot.schemaVersion != MachineSnapshot.currentSchemaVersion {
            return .failure(
                StartupFailure(
                    status: ExitStatus.dataError,
                    message:
                        "\(store.directory)/state.json has schema version \(snapshot.schemaVersion); this vendd reads version \(MachineSnapshot.currentSchemaVersion). Install the vendd that wrote it, or see README: Recovering state"
                ))
        }
        var machine = restored.snapshot?.machine ?? Machine(setup: config.machineSetup)
        for entry in restored.entries {
            if let input = entry.input { _ = machine.apply(input, at: entry.at) }
        }
        let problems = machine.integrityProblems
        guard problems.isEmpty else {
            return .failure(
                StartupFailure(
                    status: ExitStatus.dataError,
                    message:
                        "the state in \(store.directory) is inconsistent (\(problems.map(\.description).joined(separator: "; "))); it was left as it is. Inspect it, then start once with --reset-state (see README: Recovering state)"
                ))
        }
        logger.notice(
            "state restored from \(store.directory): \(restored.entries.count) journal record(s) replayed, credit \(config.machine.moneyFormat.string(for: machine.credit))"
        )
        let current = restored.snapshot != nil && restored.entries.isEmpty && restored.notes.isEmpty
        return .success(RestoredMachine(machine: machine, snapshotIsCurrent: current))
    }

    /// The MQTT link, connecting in the background. A link that cannot start (an unreadable
    /// credentials file) is logged and the machine sells on: events keep in the outbox.
    static func startFleetLink(_ config: VenddConfig, outbox: Outbox?, controller: MachineController, logger: Logger) -> FleetLink? {
        guard let settings = config.mqtt, let outbox else { return nil }
        let link = FleetLink(settings: settings, outbox: outbox, machine: controller.requests, status: controller.status, logger: logger)
        do {
            try link.start()
            return link
        } catch {
            logger.critical("MQTT: \(error); the fleet link is off until vendd restarts, events keep in the outbox")
            return nil
        }
    }

    /// The chips the zones' relays are on: opened apart from the slots' (which a reload brings
    /// down and up again), through libgpiod, or in memory in simulation.
    static func zoneChips(_ config: VenddConfig, simulate: Bool, timekeeper: any Timekeeper) -> GPIOChipSet {
        GPIOChipSet(defaultChip: config.gpio.chip, origin: config.gpio.chipOrigin) { name throws(GPIOError) in
            if simulate { return SimulatedGPIOChip(name: name, timekeeper: timekeeper) }
            return try LibgpiodChip(name)
        }
    }

    static func bringUpHardware(_ config: VenddConfig, options: DaemonOptions, controller: MachineController, logger: Logger) throws -> Hardware {
        let notify: HardwareNoticeHandler = { [notices = controller.notices] in notices.post($0) }
        if options.simulate {
            logger.notice("simulated hardware: drive it with `vendctl sim …`")
            return try Hardware.simulated(
                config, stateDirectory: options.stateDirectory ?? config.stateDirectory, lineLogPath: options.lineLog,
                timekeeper: controller.timekeeper, relayTimers: controller.relayTimers, notify: notify)
        }
        let hardware = try Hardware.real(config, timekeeper: controller.timekeeper, relayTimers: controller.relayTimers, notify: notify)
        logger.notice("GPIO: \(hardware.gpioDescription); every relay requested inactive; coins: \(hardware.coinAcceptorDescription)")
        return hardware
    }
}

extension StartupFailure: CustomStringConvertible {
    var description: String { message }
}

extension MachineController {
    /// A vend in flight when vendd stopped has an unknown outcome: resolve it by the configured
    /// policy, journaled like any input, and tell the technician. Returns its slot.
    func resolveInterruptedVend() -> SlotID? {
        guard let vend = pendingVend else { return nil }
        logger.warning(
            "\(vend.id) at slot \(vend.slot) was in flight when vendd stopped; resolving it as unknown (\(config.machine.unknownOutcomePolicy.rawValue)): check slot \(vend.slot)",
            metadata: ["SLOT": "\(vend.slot)", "VEND": "\(vend.id.rawValue)"])
        sendAndWait(.vendEnded(vend.id, .unknown))
        return vend.slot
    }
}
