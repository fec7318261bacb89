#if canImport(Glibc)
    import Glibc
#endif

/// An AF_UNIX address: a file path, or a name in Linux's abstract namespace. A name that does not
/// fit `sun_path` is refused, never cut short (a shorter path is another socket).
public struct UnixSocketAddress: Sendable {
    private var address = sockaddr_un()
    private let length: socklen_t

    /// A socket file; `path` is kept NUL-terminated.
    public init(path: String) throws(UnixSocket.Failure) {
        try self.init(Array(path.utf8) + [0], for: path)
    }

    /// `name` in the abstract namespace (written `@name` by systemd): no file, gone with its socket.
    public init(abstract name: String) throws(UnixSocket.Failure) {
        try self.init([0] + Array(name.utf8), for: "@" + name)
    }

    private init(_ bytes: [UInt8], for text: String) throws(UnixSocket.Failure) {
        address.sun_family = sa_family_t(AF_UNIX)
        guard bytes.count <= MemoryLayout.size(ofValue: address.sun_path) else { throw .pathTooLong(text) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        length = socklen_t(MemoryLayout.offset(of: \sockaddr_un.sun_path)! + bytes.count)
    }

    /// Calls `body` with the address as connect(2), bind(2) and sendto(2) take it.
    public func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
