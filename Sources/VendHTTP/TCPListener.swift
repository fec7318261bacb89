import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// Why a server could not start.
public enum HTTPServerError: Error, Equatable, CustomStringConvertible {
    /// Not an IPv4 or IPv6 literal.
    case address(String)
    case system(SystemError)

    public var description: String {
        switch self {
        case .address(let text): "'\(text)' is not an IP address (127.0.0.1, 0.0.0.0, ::1, ::)"
        case .system(let error): "\(error)"
        }
    }
}

/// A listening TCP socket, non-blocking, on an IPv4 or IPv6 literal.
final class TCPListener: Sendable {
    let descriptor: Int32
    /// The port listened on: the one asked for, or the kernel's pick for 0.
    let port: Int
    /// `127.0.0.1:8080`, `[::1]:8080`.
    let address: String

    init(address: String, port: Int) throws(HTTPServerError) {
        var storage = sockaddr_storage()
        let family: Int32
        let length: socklen_t
        guard (0...65_535).contains(port) else { throw .address("\(address) port \(port)") }
        if address.contains(":") {
            var ip6 = sockaddr_in6()
            ip6.sin6_family = sa_family_t(AF_INET6)
            ip6.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, address, &ip6.sin6_addr) == 1 else { throw .address(address) }
            withUnsafeBytes(of: ip6) { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
            (family, length) = (AF_INET6, socklen_t(MemoryLayout<sockaddr_in6>.size))
        } else {
            var ip4 = sockaddr_in()
            ip4.sin_family = sa_family_t(AF_INET)
            ip4.sin_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET, address, &ip4.sin_addr) == 1 else { throw .address(address) }
            withUnsafeBytes(of: ip4) { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
            (family, length) = (AF_INET, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
        let place = "\(address) port \(port)"
        let descriptor: Int32
        do {
            descriptor = try systemCall("socket", place) {
                socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            }
        } catch {
            throw .system(error)
        }
        do throws(SystemError) {
            var on: Int32 = 1
            // A restart may bind while the last run's connections are in TIME_WAIT.
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            // bind and getsockname take the address as a sockaddr: the calls are made inside the
            // pointer closures, their results checked outside (systemCall retries EINTR).
            try systemCall("bind", place) {
                withUnsafePointer(to: storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
            }
            try systemCall("listen", place) { listen(descriptor, 128) }
            var bound = sockaddr_storage()
            var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            try systemCall("getsockname", place) {
                withUnsafeMutablePointer(to: &bound) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &boundLength) }
                }
            }
            let boundPort =
                family == AF_INET6
                ? withUnsafeBytes(of: bound) { $0.load(as: sockaddr_in6.self).sin6_port }
                : withUnsafeBytes(of: bound) { $0.load(as: sockaddr_in.self).sin_port }
            self.port = Int(UInt16(bigEndian: boundPort))
        } catch {
            close(descriptor)
            throw .system(error)
        }
        self.descriptor = descriptor
        self.address = family == AF_INET6 ? "[\(address)]:\(self.port)" : "\(address):\(self.port)"
    }

    deinit { close(descriptor) }
}
