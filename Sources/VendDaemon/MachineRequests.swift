import VendPOSIX
import VendTelemetry
import VendTime
import VendingCore

/// What the machine's lane did with one input, told to the caller waiting for it: the core's
/// effects, and the view as the input found it and as it left it (the same machine when the input
/// was refused or could not be journaled). Taken on the lane, so no later input has changed them,
/// as a view read after the answer may have.
struct InputOutcome: Sendable {
    let effects: [Effect]
    let before: MachineController.View
    let after: MachineController.View
}

/// The machine as a service on a thread of its own sees it (the DEX port, the fleet link, a
/// control request): the view the lane published last, and requests — an input handed in and
/// its `InputOutcome` awaited. Waiting is refused on the machine's lane and on every lane that
/// must never wait (`MachineInbox`); devices hold `MachineInputs` instead.
struct MachineRequests: Sendable {
    let inbox: MachineInbox<InputOutcome>
    let published: Watched<MachineController.View>
    let timekeeper: any Timekeeper

    /// The state as it stood after the last input.
    var view: MachineController.View { published.withValue { $0 } }

    /// The wall clock as an instant.
    var now: Instant { Instant(millisecondsSinceEpoch: timekeeper.wallClockMilliseconds) }

    /// `input` journaled, applied and its effects carried out; nil if the lane had ended.
    func request(_ input: Input) -> InputOutcome? { inbox.sendAndWait(.core(input)) }

    /// Fleet events no input caused, numbered and journaled on the lane; returns once they are.
    func journal(_ events: [TelemetryEvent]) { _ = inbox.sendAndWait(.fleetEvents(events)) }

    /// `vendctl service on|off`. Nil when done; otherwise why service mode stays on, as the
    /// lane left the switches.
    func setServiceModeByTechnician(_ on: Bool) -> String? {
        guard let after = inbox.sendAndWait(.serviceSwitch(.technician, on: on))?.after, !on, after.machine.isInServiceMode else {
            return nil
        }
        return "service mode stays on while \(after.switches.reasons.joined(separator: " and ")); sales resume when that ends"
    }
}
