import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP port on 127.0.0.1, as the tests' servers (brokers, PostgreSQL) listen on it.
public enum LocalPort {
    /// Ports already handed out in this test process: a server stopped and started again keeps
    /// its port, and no other test may take it meanwhile.
    private static let handedOut = Mutex<Set<Int>>([])

    /// A port for a server of the test's own: below the kernel's ephemeral range (32768 and up,
    /// where every client's connection takes its local port), never handed out before in this
    /// process, and free now (a bind to it succeeds).
    public static func reserve() throws(LocalPortError) -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: 20_000...32_000)
            let taken = handedOut.withLock { ports in ports.insert(port).inserted == false }
            if !taken, canBind(port) { return port }
        }
        throw LocalPortError(description: "no free port on 127.0.0.1 between 20000 and 32000 after 200 tries")
    }

    /// Whether something accepts a connection on `port` now.
    public static func accepts(_ port: Int) -> Bool {
        withSocket(port) { fd, address in connect(fd, address, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }

    private static func canBind(_ port: Int) -> Bool {
        withSocket(port) { fd, address in bind(fd, address, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }

    private static func withSocket(_ port: Int, _ body: (Int32, UnsafePointer<sockaddr>) -> Bool) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0) } }
    }
}

public struct LocalPortError: Error, CustomStringConvertible {
    public let description: String
}
