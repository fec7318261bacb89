import FoundationEssentials
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// sd_notify(3) without libsystemd: datagrams to `$NOTIFY_SOCKET`. Does nothing when not started
/// by systemd.
public final class SystemdNotifier: Sendable {
    private let descriptor: Int32?
    private let address: UnixSocketAddress?
    /// Half the watchdog timeout systemd asked for: the interval between WATCHDOG=1 pings.
    public let watchdogInterval: Duration?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        if let usec = environment["WATCHDOG_USEC"].flatMap(Int64.init),
            environment["WATCHDOG_PID"].flatMap(Int32.init).map({ $0 == getpid() }) ?? true
        {
            watchdogInterval = .microseconds(usec / 2)
        } else {
            watchdogInterval = nil
        }
        guard let address = Self.address(environment["NOTIFY_SOCKET"]) else {
            self.descriptor = nil
            self.address = nil
            return
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.descriptor = descriptor >= 0 ? descriptor : nil
        self.address = address
    }

    /// `$NOTIFY_SOCKET`: a path, or `@name` in the abstract namespace. Anything else, or a name
    /// too long for an address, leaves the notifier silent.
    private static func address(_ value: String?) -> UnixSocketAddress? {
        guard let value else { return nil }
        if value.hasPrefix("/") { return try? UnixSocketAddress(path: value) }
        if value.hasPrefix("@") { return try? UnixSocketAddress(abstract: String(value.dropFirst())) }
        return nil
    }

    deinit {
        if let descriptor { close(descriptor) }
    }

    public var isActive: Bool { descriptor != nil }

    public func notify(_ state: String) {
        guard let descriptor, let address else { return }
        let bytes = Array(state.utf8)
        _ = address.withSocketAddress { socketAddress, length in
            bytes.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length) }
        }
    }

    public func ready(status: String) { notify("READY=1\nSTATUS=\(status)") }
    public func status(_ text: String) { notify("STATUS=\(text)") }
    public func stopping() { notify("STOPPING=1\nSTATUS=stopping") }
    public func watchdog() { notify("WATCHDOG=1") }

    /// Before a reload: systemd ≥ 253 waits for the READY=1 that follows.
    public func reloading() {
        notify("RELOADING=1\nMONOTONIC_USEC=\(MonotonicClock.nanoseconds / 1_000)")
    }
}
