/// The machine is in service mode while any of the key, the door or a technician says so. Kept
/// on the machine's lane, which sets each switch as its input arrives and decides service mode
/// from all of them there: switches moved on different threads are composed in input order.
struct ServiceModeSwitches: Sendable {
    enum Switch: Sendable {
        case serviceKey
        case door
        /// `vendctl service on|off` (and the fleet's command).
        case technician
    }

    var serviceKeyOn = false
    var doorOpen = false
    /// Set by `vendctl service on`; restored from the machine at start so a restart keeps it.
    var technician: Bool

    var isOn: Bool { serviceKeyOn || doorOpen || technician }

    mutating func set(_ which: Switch, on: Bool) {
        switch which {
        case .serviceKey: serviceKeyOn = on
        case .door: doorOpen = on
        case .technician: technician = on
        }
    }

    /// Why service mode is on, as the technician reads it.
    var reasons: [String] {
        [
            serviceKeyOn ? "the service key is on" : nil, doorOpen ? "the door is open" : nil,
            technician ? "switched on by a technician" : nil,
        ].compactMap { $0 }
    }
}
