import Logging
import VendConfig
import VendHardware
import VendingCore

/// SIGHUP: a new configuration replaces the running one only if it is valid and the saved state
/// accepts it; otherwise every error is logged and the old one keeps running.
enum Reload {
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
        _ = await controller.waitForVendToEnd(limit: oldConfig.machine.vendTimeout + .seconds(1))
        await controller.detachHardware()
        if let rejection = controller.apply(newConfig) {
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

/// SIGTERM/SIGINT: stop taking coins, let a vend in flight finish (within a bound), every relay
/// off, save the state.
enum Shutdown {
    /// Longer than any relay pulse plus drop window the configuration allows.
    static let vendGracePeriod: Duration = .seconds(12)

    static func perform(controller: MachineController, server: ControlServer, logger: Logger) async {
        controller.inhibitCoins()
        if !(await controller.waitForVendToEnd(limit: vendGracePeriod)), let vend = controller.pendingVend {
            logger.warning("\(vend.id) did not finish within \(vendGracePeriod.wholeMilliseconds / 1000) s; recording its outcome as unknown")
            controller.submit(.vendEnded(vend.id, .unknown))
        }
        await controller.detachHardware()
        server.stop()
        controller.events.endAll()
        controller.notices.finish()
        controller.saveSnapshot()
    }
}
