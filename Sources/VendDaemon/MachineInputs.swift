import VendingCore

/// The machine as a device, a driver's thread or a background service sees it: somewhere to hand
/// an input and go on. It can neither read the machine's state nor wait for it, so no device
/// thread blocks on the machine or acts on a copy of its state that a later input has changed;
/// what each input means is decided on the machine's lane, in the order the inputs arrived.
struct MachineInputs: Sendable {
    let inbox: MachineInbox<InputOutcome>

    /// An input of the core (a press, a coin, a card report, a zone's trip).
    func send(_ input: Input) { inbox.send(.core(input)) }

    /// A service-mode switch (key, door) moved: composed with the others on the lane.
    func moveSwitch(_ which: ServiceModeSwitches.Switch, on: Bool) { inbox.send(.serviceSwitch(which, on: on)) }

    /// The hardware can no longer work (its inputs are gone): out of order until a restart. The
    /// lane puts the machine out of order in input order, so no effect read before the fault can
    /// enable coins after it.
    func hardwareFailed(_ reason: String) { inbox.send(.hardwareFailed(reason)) }
}
