import Dispatch
import Foundation
import Synchronization
import Testing
import VendHardware
import VendTime
import VenddTestSupport
import VendingCore

@testable import VendDaemon

/// A coin acceptor that keeps the acceptance it was last told, and that a test can arm to run
/// something inside the next call that enables it, on the thread carrying out the effect (the
/// machine's lane), before the call takes effect.
final class ProbeAcceptor: CoinAcceptor {
    private let state = Mutex<(accepting: Bool, onEnable: (@Sendable () -> Void)?)>((false, nil))

    func start(lastSequence: @escaping @Sendable (String) -> UInt64?, deliver: @escaping CoinAcceptorEventHandler) {}

    func setAcceptance(_ enabled: Bool) {
        if enabled, let hook = takeHook() { hook() }
        state.withLock { $0.accepting = enabled }
    }

    private func takeHook() -> (@Sendable () -> Void)? {
        state.withLock { state in
            defer { state.onEnable = nil }
            return state.onEnable
        }
    }

    func stop() async {}

    /// `action` runs inside the next `setAcceptance(true)`, once.
    func armOnEnable(_ action: @escaping @Sendable () -> Void) { state.withLock { $0.onEnable = action } }

    var isAccepting: Bool { state.withLock { $0.accepting } }
}

extension Hardware {
    /// The same hardware with another coin acceptor.
    func replacing(coinAcceptor: any CoinAcceptor) -> Hardware {
        Hardware(
            panel: panel, dispenser: dispenser, coinAcceptor: coinAcceptor, payouts: payouts, world: world, gpioDescription: gpioDescription,
            coinAcceptorDescription: "probe", mdb: mdb, simulatedMDB: simulatedMDB, hopperLinks: [])
    }
}

/// systemd's watchdog proves the machine's lane alive, not only the timers' thread.
@Suite(.timeLimit(.minutes(1))) struct WatchdogTests {
    /// The lane is held on purpose inside a device call (as a hung fsync or a deadlock would
    /// hold it): the timers thread goes on ticking, and WATCHDOG=1 must stop, so that systemd
    /// kills and restarts vendd. Once the lane goes on, so do the pings.
    @Test func theWatchdogStopsWhileTheMachineLaneIsHeld() async throws {
        let probe = ProbeAcceptor()
        let rig = try ControllerRig(devices: { hardware, _ in hardware.replacing(coinAcceptor: probe) })
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let systemd = try DatagramReceiver(in: directory, name: "notify.sock")
        // WatchdogSec=4s: a ping every 2 s.
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "4000000"])
        let watchdog = MachineWatchdog(notifier: notifier, timekeeper: rig.time)
        /// The timers thread's second: the tick, the ping if due; then the lane's turn.
        func seconds(_ count: Int, settling: Bool) -> Int {
            for _ in 0..<count {
                rig.time.advance(by: .seconds(1))
                watchdog.beat(rig.controller)
                if settling { rig.controller.settle() }
            }
            return systemd.waiting().filter { $0 == "WATCHDOG=1" }.count
        }

        #expect(seconds(8, settling: true) >= 3, "a working lane is pinged every interval")

        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        probe.armOnEnable {
            held.signal()
            release.wait()
        }
        rig.controller.send(.restock(rig.config.slots[0].id, count: nil, loadedAt: nil))  // enables coins: the lane is held
        held.wait()
        _ = seconds(3, settling: false)  // the last tick the lane carried out grows older than the interval
        let whileHeld = seconds(8, settling: false)
        release.signal()
        rig.controller.settle()
        #expect(whileHeld == 0, "WATCHDOG=1 sent \(whileHeld)× in 8 s while the machine's lane was held")

        #expect(seconds(6, settling: true) >= 2, "the pings resume with the lane")
        await rig.tearDown()
    }
}
