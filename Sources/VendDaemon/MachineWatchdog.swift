import Logging
import Synchronization
import VendSystemd
import VendTime

/// systemd's watchdog (`WatchdogSec=`), fed only while the machine's lane is seen to work. Every
/// second the timers thread sends the machine its tick and, once per interval (half the timeout
/// systemd asked for), pings WATCHDOG=1 — but only if the lane itself has carried out the tick
/// sent a beat before (it stamps each tick it carries out); otherwise the ping waits for a later
/// beat. Since the inbox, `tick()` only queues: pinging on the timers thread alone kept systemd
/// content while the machine was stuck in an fsync or a deadlock. Now such a lane goes unpinged,
/// and after `WatchdogSec=` systemd kills and restarts vendd.
final class MachineWatchdog: Sendable {
    private struct State {
        var lastPing: ContinuousClock.Instant
        /// When the previous beat sent its tick.
        var previousBeat: ContinuousClock.Instant?
        /// The lane has carried out no tick for longer than the interval: said once per stall,
        /// so that the journal tells why systemd restarted vendd.
        var stalled = false
    }

    private let notifier: SystemdNotifier
    private let timekeeper: any Timekeeper
    private let logger: Logger?
    private let state: Mutex<State>

    init(notifier: SystemdNotifier, timekeeper: any Timekeeper, logger: Logger? = nil) {
        self.notifier = notifier
        self.timekeeper = timekeeper
        self.logger = logger
        state = Mutex(State(lastPing: timekeeper.now))
    }

    /// Every second, on the timers thread.
    func beat(_ controller: MachineController) {
        let now = timekeeper.now
        controller.tick()
        guard let interval = notifier.watchdogInterval else { return }
        let lastTick = controller.lastTickCarriedOut
        let (ping, stalled, changed) = state.withLock { state -> (Bool, Bool, Bool) in
            defer { state.previousBeat = now }
            // Before the lane's first tick nothing proves it alive (systemd counts from READY=1).
            guard let lastTick, let previousBeat = state.previousBeat else { return (false, false, false) }
            let stalled = now - lastTick > interval
            defer { state.stalled = stalled }
            let changed = stalled != state.stalled
            guard lastTick >= previousBeat, now - state.lastPing >= interval else { return (false, stalled, changed) }
            state.lastPing = now
            return (true, stalled, changed)
        }
        if changed, stalled, let lastTick {
            logger?.critical(
                "the machine's lane has carried out no tick for \((now - lastTick).wholeMilliseconds / 1000) s (stuck in storage or a device?): the systemd watchdog is no longer fed, and systemd restarts vendd"
            )
        } else if changed {
            logger?.notice("the machine's lane carries out its ticks again: the systemd watchdog is fed again")
        }
        if ping { notifier.watchdog() }
    }
}
