import Logging
import VendConfig
import VendDrivers
import VendHardware
import VendSystemd
import VendingCore

/// SIGHUP: a new configuration replaces the running one only if it is valid and the saved state
/// accepts it; otherwise every error is logged and the old one keeps running. The hardware is
/// swapped while draining: no vend, coin or payout starts until the new one is attached.
enum Reload {
    /// How long a reload waits for a payout in flight (besides the vend timeout).
    static let payoutGracePeriod: Duration = .seconds(60)

    static func perform(_ options: DaemonOptions, controller: MachineController, logger: Logger, notifier: SystemdNotifier) async {
        notifier.reloading()
        defer { notifier.ready(status: "reloaded") }
        logger.notice("SIGHUP: reloading \(options.configPath)")
        let newConfig: VenddConfig
        do {
            newConfig = try ConfigLoader.load(file: options.configPath)
        } catch {
            for diagnostic in error.diagnostics { logger.error("\(diagnostic)") }
            logger.error("configuration NOT reloaded (\(error.diagnostics.count) error(s)); still running the previous one")
            return
        }
        let oldConfig = controller.config
        if newConfig.control.socketPath != oldConfig.control.socketPath || newConfig.stateDirectory != oldConfig.stateDirectory {
            logger.warning("control.socket and state.directory changes take effect at the next restart")
        }
        if newConfig.dex.map(DEXService.identity) != oldConfig.dex.map(DEXService.identity) {
            logger.warning("dex changes take effect at the next restart")
        }
        // What is in flight finishes with the hardware it started on: a vend, and a payout.
        if !(await controller.drain(waitingFor: oldConfig.machine.vendTimeout + Self.payoutGracePeriod, payouts: true)) {
            logger.warning(
                "a vend or payout is still in flight after the reload's grace period: the old hardware is stopped under it, and its outcome is resolved as after a restart"
            )
        }
        defer { controller.sendAndWait(.setDraining(false)) }
        await controller.detachHardware()
        if let rejection = controller.reconfigure(to: newConfig) {
            logger.error("configuration NOT reloaded: \(rejection); still running the previous one")
            await attachOrFault(oldConfig, options: options, controller: controller, logger: logger)
            return
        }
        if await attachOrFault(newConfig, options: options, controller: controller, logger: logger) {
            logger.notice("configuration reloaded: \(newConfig.slots.count) slots")
        }
    }

    /// Hardware for `config`; on failure the machine stays up without hardware and says why.
    @discardableResult
    private static func attachOrFault(_ config: VenddConfig, options: DaemonOptions, controller: MachineController, logger: Logger) async -> Bool {
        do {
            let hardware = try Startup.bringUpHardware(config, options: options, controller: controller, logger: logger)
            controller.attach(hardware)
            return true
        } catch {
            logger.critical("hardware could not be brought up after the reload: \(error); fix it and restart vendd")
            return false
        }
    }
}

/// SIGTERM/SIGINT: drain (no vend, coin or payout starts), let a vend in flight finish (within a
/// bound), every relay off, save the state.
enum Shutdown {
    /// Longer than any relay pulse plus drop window the configuration allows.
    static let vendGracePeriod: Duration = .seconds(12)

    static func perform(controller: MachineController, server: ControlServer, logger: Logger) async {
        if !(await controller.drain(waitingFor: vendGracePeriod)), let vend = controller.pendingVend {
            logger.warning("\(vend.id) did not finish within \(vendGracePeriod.wholeMilliseconds / 1000) s; recording its outcome as unknown")
            controller.sendAndWait(.vendEnded(vend.id, .unknown))
        }
        await controller.detachHardware()
        server.stop()
        controller.events.endAll()
        await controller.notices.finish()
        controller.saveSnapshot()
    }
}
