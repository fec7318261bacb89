import Synchronization
import VendHardware
import VendPOSIX
import VendTime
import VendingCore

/// What a serial coin-acceptor driver's thread shares with the rest of vendd: the wanted
/// acceptance, the stop request, and a `Waiter` that wakes the thread when either changes.
final class DriverControl: Sendable {
    private struct State {
        var accepting = false
        var stopping = false
        var finished = false
        var waitingForFinish: [CheckedContinuation<Void, Never>] = []
    }

    let waiter: Waiter
    let timekeeper: any Timekeeper
    private let state = Mutex(State())

    init(timekeeper: any Timekeeper) {
        do {
            waiter = try Waiter()
        } catch {
            // pipe(2) fails only when the process is out of descriptors: no driver can run then.
            preconditionFailure("\(error)")
        }
        self.timekeeper = timekeeper
    }

    var wantsAcceptance: Bool { state.withLock { $0.accepting } }
    var isStopping: Bool { state.withLock { $0.stopping } }

    func setAcceptance(_ enabled: Bool) {
        state.withLock { $0.accepting = enabled }
        waiter.wake()
    }

    /// Sleeps for `duration` of the timekeeper's time, or less if woken by a change or a stop
    /// request.
    func sleep(_ duration: Duration) {
        guard !isStopping else { return }
        let alarm = timekeeper.schedule(after: duration) { [waiter] in waiter.wake() }
        _ = waiter.wait(for: nil, timeout: .seconds(3_600))
        timekeeper.cancel(alarm)
    }

    /// Asks the thread to stop and waits until it has.
    func stop() async {
        await withCheckedContinuation { continuation in
            let finished = state.withLock { state in
                state.stopping = true
                if !state.finished { state.waitingForFinish.append(continuation) }
                return state.finished
            }
            if finished { continuation.resume() }
            waiter.wake()
        }
    }

    /// Called by the thread as it ends.
    func markFinished() {
        let waiting = state.withLock { state in
            state.finished = true
            defer { state.waitingForFinish.removeAll() }
            return state.waitingForFinish
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// Everything a driver's thread body gets.
struct DriverContext: Sendable {
    let control: DriverControl
    /// Hands an event over as the device's report (`DeviceReport.cash`): a coin becomes an input
    /// queued in the machine's inbox, never waited for (the driver goes on polling while the
    /// machine journals it).
    let emit: @Sendable (CoinAcceptorEvent) -> Void
    /// The last coin event already credited per source (durable state at start).
    let lastSequence: @Sendable (String) -> UInt64?
}

/// A coin acceptor whose protocol runs on a thread of its own: serial I/O blocks in `poll(2)`,
/// never in the daemon's tasks. `body` talks to the device until `control.isStopping`.
final class ThreadedCoinAcceptor: CoinAcceptor {
    private let control: DriverControl
    private let name: String
    private let body: @Sendable (DriverContext) -> Void
    private let started = Mutex(false)

    init(name: String, timekeeper: any Timekeeper, body: @escaping @Sendable (DriverContext) -> Void) {
        self.name = name
        self.body = body
        control = DriverControl(timekeeper: timekeeper)
    }

    func start(lastSequence: @escaping @Sendable (String) -> UInt64?, report: @escaping DeviceReportHandler) {
        let alreadyStarted = started.withLock { started in
            defer { started = true }
            return started
        }
        guard !alreadyStarted else { return }
        let context = DriverContext(control: control, emit: { report(.cash($0)) }, lastSequence: lastSequence)
        let body = body, control = control
        PosixThread.start(name: name) {
            body(context)
            control.markFinished()
        }
    }

    func setAcceptance(_ enabled: Bool) {
        control.setAcceptance(enabled)
    }

    func stop() async {
        guard started.withLock({ $0 }) else { return }
        await control.stop()
    }
}

/// Says when a link goes down or comes back: one notice per change, not one per retry. The
/// latest notice is what `vendctl` shows as the acceptor's health.
struct LinkHealth {
    private enum State: Equatable { case unknown, up, down(String) }
    private var state = State.unknown

    var isUp: Bool { state == .up }

    mutating func up(_ message: String, _ emit: (CoinAcceptorEvent) -> Void) {
        guard state != .up else { return }
        state = .up
        emit(.notice(message, isFault: false))
    }

    mutating func down(_ reason: String, _ emit: (CoinAcceptorEvent) -> Void) {
        guard state != .down(reason) else { return }
        state = .down(reason)
        emit(.notice(reason, isFault: true))
    }
}

/// Reconnection delays: quick at first (a replugged adapter is back within a second), then every
/// 5 s at most so a missing device costs nothing.
struct Backoff {
    private static let steps: [Duration] = [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5)]
    private var index = 0

    mutating func next() -> Duration {
        defer { index = min(index + 1, Self.steps.count - 1) }
        return Self.steps[index]
    }

    mutating func reset() { index = 0 }
}
