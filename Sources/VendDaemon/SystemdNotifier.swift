#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// sd_notify(3) without libsystemd: datagrams to `$NOTIFY_SOCKET`. Does nothing when not started
/// by systemd.
public final class SystemdNotifier: Sendable {
    private let descriptor: Int32?
    private let address: sockaddr_un?
    private let addressLength: socklen_t
    /// Half the watchdog timeout systemd asked for: the interval between WATCHDOG=1 pings.
    public let watchdogInterval: Duration?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        if let usec = environment["WATCHDOG_USEC"].flatMap(Int64.init),
           environment["WATCHDOG_PID"].flatMap(Int32.init).map({ $0 == getpid() }) ?? true {
            watchdogInterval = .microseconds(usec / 2)
        } else {
            watchdogInterval = nil
        }
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty,
              path.hasPrefix("/") || path.hasPrefix("@") else {
            descriptor = nil
            address = nil
            addressLength = 0
            return
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let fits = withUnsafeMutableBytes(of: &address.sun_path) { raw -> Bool in
            guard bytes.count < raw.count else { return false }
            raw.copyBytes(from: bytes)
            if path.hasPrefix("@") { raw[0] = 0 }   // abstract namespace
            return true
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fits, descriptor >= 0 else {
            if descriptor >= 0 { close(descriptor) }
            self.descriptor = nil
            self.address = nil
            addressLength = 0
            return
        }
        self.descriptor = descriptor
        self.address = address
        addressLength = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
    }

    deinit {
        if let descriptor { close(descriptor) }
    }

    public var isActive: Bool { descriptor != nil }

    public func notify(_ state: String) {
        guard let descriptor, var address else { return }
        let bytes = Array(state.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, addressLength) }
            }
        }
    }

    public func ready(status: String) { notify("READY=1\nSTATUS=\(status)") }
    public func status(_ text: String) { notify("STATUS=\(text)") }
    public func stopping() { notify("STOPPING=1\nSTATUS=stopping") }
    public func watchdog() { notify("WATCHDOG=1") }

    /// Before a reload: systemd ≥ 253 waits for the READY=1 that follows.
    public func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        notify("RELOADING=1\nMONOTONIC_USEC=\(Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000)")
    }
}
