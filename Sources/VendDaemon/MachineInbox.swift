import Dispatch
import Synchronization
import VendPOSIX
import VendTelemetry
import VendingCore

/// What the machine's lane carries out: an input of the core, or a change the lane composes into
/// one from the state it alone keeps.
enum LaneInput: Sendable {
    case core(Input)
    /// A service-mode switch moved: the lane sets it and gives the core the service mode all the
    /// switches decide, in the order the switches moved (never a value computed elsewhere).
    case serviceSwitch(ServiceModeSwitches.Switch, on: Bool)
    /// The hardware can no longer work (the GPIO thread lost its inputs): out of order until a
    /// restart, from this point in the input order on.
    case hardwareFailed(String)
    /// Fleet events no input caused (a DEX session's end): journaled in a record of their own.
    case fleetEvents([TelemetryEvent])
}

/// The only way into the machine. Every input — a press, a coin, a vend's outcome, a payout
/// report, a timer's tick, a control request — is put into this inbox, and one thread,
/// `vendd-machine`, takes them in order: journal, apply, then the effects, with the state let
/// go (it is the lane's alone: `LaneBound`). So a device or timer calling back while the machine is busy only queues its input
/// (it cannot deadlock, nor run a second input inside the first), and no lane a device or a
/// relay timer runs on ever waits for storage.
///
/// `send` is for devices and timers: it never waits. `sendAndWait` is for a caller that needs
/// the input's `Outcome` as the lane carried it out (a control request, the DEX port) or must
/// know an input is durable before it acts (a payout device recording what it holds before it
/// pays). It is refused, as `settle` is, on the
/// machine's own thread (it would wait for itself) and on every lane that must never wait
/// (`PosixThread.markNeverWaits`: the relays', the log's, the GPIO reader's), where waiting
/// for the machine — an fsync — would stretch a pulse or stall the inputs.
final class MachineInbox<Outcome: Sendable>: Sendable {
    private enum Item: Sendable {
        case input(LaneInput, Reply?)
        /// Answers once everything put before it has been carried out.
        case barrier(Reply)
        /// Work another thread hands the lane (it changes what the lane owns), answered once done.
        case run(@Sendable () -> Void, Reply)
    }

    /// Where a waiting caller gets the outcome (none for a barrier or work).
    private final class Reply: Sendable {
        private let outcome = Mutex<Outcome?>(nil)
        private let done = DispatchSemaphore(value: 0)

        func give(_ outcome: Outcome?) {
            self.outcome.withLock { $0 = outcome }
            done.signal()
        }

        func wait() -> Outcome? {
            done.wait()
            return outcome.withLock { $0 }
        }
    }

    private let lane = Lane<Item>(name: "vendd-machine", neverWaits: true)

    /// Starts the machine's thread; `process` carries out one input and returns its outcome.
    func start(_ process: @escaping @Sendable (LaneInput) -> Outcome) {
        lane.start { item in
            switch item {
            case .input(let input, let reply):
                let outcome = process(input)
                reply?.give(outcome)
            case .barrier(let reply):
                reply.give(nil)
            case .run(let work, let reply):
                work()
                reply.give(nil)
            }
        }
    }

    func send(_ input: LaneInput) {
        lane.put(.input(input, nil))
    }

    /// The input's outcome once carried out; nil once the inbox is closed (it is dropped).
    func sendAndWait(_ input: LaneInput) -> Outcome? {
        refuseToWait("sendAndWait(\(input))")
        let reply = Reply()
        guard lane.put(.input(input, reply)) else { return nil }
        return reply.wait()
    }

    /// Returns once every input put so far has been carried out (a test's or a drain's barrier).
    func settle() {
        refuseToWait("settle()")
        let reply = Reply()
        guard lane.put(.barrier(reply)) else { return }
        _ = reply.wait()
    }

    /// Runs `work` on the machine's thread, after everything put so far, and returns once it has
    /// run; false (not run) once the inbox is closed. For start-up, reload and shutdown, which
    /// change what the lane owns (the hardware, the configuration, the store).
    @discardableResult
    func runAndWait(_ work: @escaping @Sendable () -> Void) -> Bool {
        refuseToWait("runAndWait")
        let reply = Reply()
        guard lane.put(.run(work, reply)) else { return false }
        _ = reply.wait()
        return true
    }

    /// `value`, reachable from now on only on the machine's thread.
    func bind<Value>(_ value: sending Value) -> LaneBound<Value> { LaneBound(value, on: lane) }

    /// Stops the process (a programming error) when the calling thread must not wait for the machine.
    private func refuseToWait(_ call: @autoclosure () -> String) {
        precondition(!lane.isCurrentThread, "\(call()) on the machine's own thread would wait for itself: use send")
        if let lane = PosixThread.neverWaitingName {
            preconditionFailure("\(call()) on \(lane), a lane that must never wait for the machine: use send")
        }
    }

    /// Carries out what was put, then `finally` (on the machine's thread, the last thing it does),
    /// then ends the thread; later inputs are dropped.
    func close(finally: @escaping @Sendable () -> Void = {}) { lane.close(last: .run(finally, Reply())) }
}
