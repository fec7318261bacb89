/// The machine is in service mode while any of the key, the door or a technician says so.
struct ServiceModeSwitches {
    var serviceKeyOn = false
    var doorOpen = false
    /// Set by `vendctl service on`; restored from the machine at start so a restart keeps it.
    var technician: Bool

    var isOn: Bool { serviceKeyOn || doorOpen || technician }

    /// Why service mode is on, as the technician reads it.
    var reasons: [String] {
        [
            serviceKeyOn ? "the service key is on" : nil, doorOpen ? "the door is open" : nil,
            technician ? "switched on by a technician" : nil,
        ].compactMap { $0 }
    }
}
