import Dispatch
import Foundation
import Logging
import Synchronization
import Testing
import VendConfig
import VendHardware
import VendPOSIX
import VendSystemd
import VendTime
import VenddTestSupport
import VendingCore

@testable import VendDaemon

/// A coin acceptor that keeps the acceptance it was last told, and that a test can arm to run
/// something inside the next call that enables it, on the thread carrying out the effect (the
/// machine's lane), before the call takes effect.
final class ProbeAcceptor: CoinAcceptor {
    private let state = Mutex<(accepting: Bool, onEnable: (@Sendable () -> Void)?)>((false, nil))

    func start(lastSequence: @escaping @Sendable (String) -> UInt64?, report: @escaping DeviceReportHandler) {}

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
@Suite(.timeLimit(.minutes(5))) struct WatchdogTests {
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

/// A log that keeps nothing: it hands each message to `tap`, on the thread that logs it.
struct TapLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info
    let tap: @Sendable (String) -> Void

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { tap("\(event.message)") }
}

/// Something for a spin loop to do that the optimiser keeps.
final class Spin: Sendable {
    private let count = Atomic(0)
    private let lengthValue = Atomic(0)
    var length: Int {
        get { lengthValue.load(ordering: .acquiring) }
        set { lengthValue.store(newValue, ordering: .releasing) }
    }
    func run(_ steps: Int) { for _ in 0..<steps { count.add(1, ordering: .relaxed) } }
}

final class Flag: Sendable {
    private let value = Atomic(false)
    func set(_ on: Bool) { value.store(on, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// Service mode follows the switches (key, door, technician) in the order they moved, whichever
/// threads move them: the machine ends as the switches' final states say.
@Suite(.timeLimit(.minutes(2))) struct ServiceSwitchOrderTests {
    /// The issue's race: the door closes on the GPIO thread while `vendctl service on` (or off)
    /// comes in on the control thread. The technician's thread waits, spinning, for the door
    /// thread's "door closed" (the log's tap), and the door thread then goes on after a delay
    /// that sweeps 0–2,000 spins over the rounds, so that the two meet at every distance. The
    /// door ends closed and the key off: the machine must be in service mode exactly when the
    /// technician's last word was "on".
    @Test func aDoorClosingRacingTheTechnicianEndsAsTheSwitchesSay() async throws {
        let doorClosing = Flag()
        let spin = Spin()
        let logger = Logger(label: "test") { _ in
            TapLogHandler { message in
                guard message == "door closed" else { return }
                doorClosing.set(true)
                spin.run(spin.length)
            }
        }
        let rig = try ControllerRig(logger: logger)
        let controller = rig.controller
        // The door's reports take the route the GPIO thread's take.
        let devices = DeviceReportRoute(logger: logger, notices: controller.notices, machine: controller.inputs, dispenser: rig.hardware.dispenser)
        let rounds = 400
        var wrong: [String] = []
        for round in 0..<rounds {
            let technicianOn = round % 2 == 0
            devices.report(.panel(.door(open: true)))
            controller.settle()
            doorClosing.set(false)
            spin.length = (round % 100) * 20
            let technicianReady = Flag()
            let technicianDone = DispatchSemaphore(value: 0)
            let technician = Thread {
                technicianReady.set(true)
                while !doorClosing.isSet {}
                _ = controller.requests.setServiceModeByTechnician(technicianOn)
                technicianDone.signal()
            }
            technician.start()
            while !technicianReady.isSet {}
            devices.report(.panel(.door(open: false)))
            technicianDone.wait()
            controller.settle()
            if controller.currentMachine.isInServiceMode != technicianOn {
                wrong.append("round \(round): technician \(technicianOn ? "on" : "off"), machine \(technicianOn ? "selling" : "in service mode")")
            }
        }
        #expect(wrong.count == 0, "\(wrong.count) of \(rounds) rounds ended against the switches, e.g. \(wrong.prefix(3).joined(separator: "; "))")
        await rig.tearDown()
    }
}

/// A hardware fault reported from the GPIO thread is an input like any other: coin acceptance
/// stays off after it, whenever it comes.
@Suite(.timeLimit(.minutes(2))) struct HardwareFaultOrderTests {
    static let reason = "the GPIO inputs stopped delivering events"

    /// The worst moment: the machine's lane has read what its effects need (not faulty yet) and
    /// is enabling coins when the GPIO thread reports its inputs lost. The fault must not be
    /// overtaken by that enable.
    @Test func aFaultWhileCoinsAreBeingEnabledLeavesThemOff() async throws {
        let probe = ProbeAcceptor()
        let rig = try ControllerRig(devices: { hardware, _ in hardware.replacing(coinAcceptor: probe) })
        let controller = rig.controller
        probe.armOnEnable {
            // The GPIO thread's `lost` callback, run to its end while the lane waits here.
            let reported = DispatchSemaphore(value: 0)
            Thread {
                controller.inputs.hardwareFailed(Self.reason)
                reported.signal()
            }.start()
            reported.wait()
        }
        controller.sendAndWait(.restock(rig.config.slots[0].id, count: nil, loadedAt: nil))  // enables coins
        controller.settle()
        #expect(controller.status().state == "out-of-order")
        #expect(!controller.acceptsCoins)
        #expect(!probe.isAccepting, "the coin acceptor takes coins on a machine out of order")
        await rig.tearDown()
    }

    /// The fault at any moment while the technician switches service mode on and off (coins
    /// inhibited and enabled again) on another thread.
    @Test func aFaultAtAnyMomentLeavesCoinsOff() async throws {
        var accepting: [Int] = []
        for round in 0..<20 {
            let probe = ProbeAcceptor()
            let rig = try ControllerRig(devices: { hardware, _ in hardware.replacing(coinAcceptor: probe) })
            let controller = rig.controller
            controller.sendAndWait(.restock(rig.config.slots[0].id, count: nil, loadedAt: nil))
            DispatchQueue.concurrentPerform(iterations: 2) { thread in
                if thread == 0 {
                    for change in 0..<40 { _ = controller.requests.setServiceModeByTechnician(change % 2 == 0) }
                } else {
                    usleep(UInt32(round * 500))
                    controller.inputs.hardwareFailed(Self.reason)
                }
            }
            controller.settle()
            if probe.isAccepting || controller.acceptsCoins { accepting.append(round) }
            await rig.tearDown()
        }
        #expect(accepting.isEmpty, "coins accepted after the fault in rounds \(accepting)")
    }
}

/// `sendAndWait` and `settle` are refused on every lane that must never wait for the machine:
/// the machine's own (it would wait for itself), the relays' (a pulse would stretch by an fsync),
/// the log's and the GPIO reader's. A refusal stops the process: it is a programming error.
@Suite(.timeLimit(.minutes(2))) struct WaitRefusalTests {
    @Test func onTheRelayLane() async {
        await #expect(processExitsWith: .failure) {
            let inbox = MachineInbox<Void>()
            inbox.start { _ in }
            let relays = SystemTimekeeper(threadName: "vendd-relays", neverWaits: true)
            relays.schedule(after: .zero) { _ = inbox.sendAndWait(.core(.tick)) }
            sleep(5)
        }
    }

    @Test func onTheLogLane() async {
        await #expect(processExitsWith: .failure) {
            let inbox = MachineInbox<Void>()
            inbox.start { _ in }
            let log = Lane<Int>(name: "vendd-log", neverWaits: true)
            log.start { _ in inbox.settle() }
            log.put(1)
            sleep(5)
        }
    }

    @Test func onTheGPIOThread() async {
        await #expect(processExitsWith: .failure) {
            let inbox = MachineInbox<Void>()
            inbox.start { _ in }
            PosixThread.start(name: "vendd-gpio", neverWaits: true) { _ = inbox.sendAndWait(.core(.tick)) }
            sleep(5)
        }
    }

    @Test func onTheMachinesOwnLane() async {
        await #expect(processExitsWith: .failure) {
            let inbox = MachineInbox<Void>()
            inbox.start { [inbox] _ in inbox.settle() }
            inbox.send(.core(.tick))
            sleep(5)
        }
    }

    /// The threads that may wait still can: the timers' (a payout device's "asked" record), and
    /// a control request's.
    @Test func elsewhereItWaits() async {
        let inbox = MachineInbox<Void>()
        inbox.start { _ in }
        let timers = SystemTimekeeper()
        let answered = DispatchSemaphore(value: 0)
        timers.schedule(after: .zero) {
            _ = inbox.sendAndWait(.core(.tick))
            answered.signal()
        }
        #expect(answered.wait(timeout: .now() + 5) == .success)
        inbox.settle()
        inbox.close()
    }

    /// The lanes vendd runs are marked: the machine's effects are carried out on a thread that
    /// says it never waits.
    @Test func theMachinesLaneIsMarked() async throws {
        let probe = ProbeAcceptor()
        let rig = try ControllerRig(devices: { hardware, _ in hardware.replacing(coinAcceptor: probe) })
        let seen = Mutex<String?>(nil)
        probe.armOnEnable { seen.withLock { $0 = PosixThread.neverWaitingName } }
        rig.controller.sendAndWait(.restock(rig.config.slots[0].id, count: nil, loadedAt: nil))
        #expect(seen.withLock { $0 } == "vendd-machine")
        #expect(PosixThread.neverWaitingName == nil)
        await rig.tearDown()
    }
}

/// The relay lane's real-time priority: granted, its thread is SCHED_FIFO; refused, the thread
/// runs all the same and the refusal says what the system said (vendd logs it at start).
@Suite struct RealTimeLaneTests {
    @Test func aRefusedPriorityIsNamedAndTheTimersStillRun() {
        // 100 is above SCHED_FIFO's highest priority (99): refused for every user.
        let timers = SystemTimekeeper(threadName: "test-relays", realTimePriority: 100)
        let refusal = timers.realTimeRefusal?.description ?? ""
        #expect(refusal.contains("pthread_setschedparam(SCHED_FIFO, 100)") && refusal.contains("Invalid argument"), "\(refusal)")
        let ran = DispatchSemaphore(value: 0)
        timers.schedule(after: .milliseconds(1)) { ran.signal() }
        #expect(ran.wait(timeout: .now() + 5) == .success)
    }

    @Test func aGrantedPriorityMakesTheThreadFIFO() throws {
        let policy = Mutex<Int32?>(nil)
        let ran = DispatchSemaphore(value: 0)
        let timers = SystemTimekeeper(threadName: "test-relays", realTimePriority: 1)
        try #require(
            timers.realTimeRefusal == nil, "this test needs SCHED_FIFO (root, or RLIMIT_RTPRIO ≥ 1): \(timers.realTimeRefusal!)")
        timers.schedule(after: .zero) {
            var parameters = sched_param()
            var current: Int32 = 0
            pthread_getschedparam(pthread_self(), &current, &parameters)
            policy.withLock { $0 = current }
            ran.signal()
        }
        #expect(ran.wait(timeout: .now() + 5) == .success)
        #expect(policy.withLock { $0 } == SCHED_FIFO)
    }
}

/// The machine's state is its lane's in the types (`LaneBound`): touched from any other thread,
/// the process stops; on the lane, it is the lane's to change.
@Suite(.timeLimit(.minutes(5))) struct LaneBoundTests {
    @Test func touchedFromAnotherThreadTheProcessStops() async {
        await #expect(processExitsWith: .failure) {
            let lane = Lane<Int>(name: "vendd-machine")
            let bound = LaneBound(0, on: lane)
            lane.start { _ in }
            bound.withValue { $0 += 1 }
        }
    }

    @Test func onItsLaneItChanges() {
        let lane = Lane<Int>(name: "vendd-machine")
        let bound = LaneBound(0, on: lane)
        let total = Mutex(0)
        let read = DispatchSemaphore(value: 0)
        lane.start { step in
            guard step > 0 else {
                total.withLock { $0 = bound.withValue { $0 } }
                read.signal()
                return
            }
            bound.withValue { $0 += step }
        }
        for step in 1...100 { lane.put(step) }
        lane.put(0)  // read it, on the lane
        read.wait()
        #expect(total.withLock { $0 } == 5_050)
        lane.close()
    }

    /// What the other threads read is the view the lane published after the input they waited for.
    @Test func queriesReadTheViewPublishedAfterEachInput() async throws {
        let rig = try ControllerRig()
        let slot = rig.config.slots[0].id
        for stock in 1...5 {
            rig.controller.sendAndWait(.restock(slot, count: 1, loadedAt: nil))
            #expect(rig.controller.status().slots.first { $0.id == slot.rawValue }?.stock == stock)
            #expect(rig.controller.currentMachine.stock[slot]?.count == stock)
        }
        await rig.tearDown()
    }
}

/// Readers never wait for the machine's lane (they used to wait for its lock): the view they read
/// is published before anything wakes them. The fleet link, woken by the outbox, reads `status()`
/// and must find the input whose event woke it (a zone's lock once went out as "past-limit", a
/// service-mode change was never sent).
@Suite(.timeLimit(.minutes(5))) struct PublishedViewTests {
    @Test func theOutboxWakesItsReaderOnTheStateOfTheInputThatWokeIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let config = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent("config/examples/cctalk-coins.yaml").path)
        let store = try MachineStore(directory: directory.path)
        _ = try store.restore()
        let outbox = Outbox(machine: "m1", currency: config.machine.currency, keepDays: 2, logger: Logger(label: "test"))
        let controller = MachineController(
            machine: Machine(setup: config.machineSetup), store: store, config: config, logger: Logger(label: "test"),
            timekeeper: ManualTimekeeper(), outbox: outbox)
        let seen = Mutex<[String]>([])
        outbox.onAdd { seen.withLock { $0.append(controller.status().credit) } }
        for sequence in 1...3 {
            controller.sendAndWait(
                .coinInserted(
                    value: Money(minorUnits: 100, currency: config.machine.currency), event: CoinEventID(source: "test", sequence: UInt64(sequence))))
        }
        #expect(seen.withLock { $0 } == ["100", "200", "300"])
        controller.closeStore()
    }
}
