import CVendSystem
#if canImport(Glibc)
import Glibc
#endif

/// A stream socket in the file system: the control socket on both sides. Blocking I/O; `EINTR`
/// is retried here and nowhere else.
public final class UnixSocket: @unchecked Sendable {
    // @unchecked: the descriptor is used by one thread at a time (a connection's reader, or its
    // writer under the owner's lock), and `close` is idempotent.
    public let descriptor: Int32
    private var buffer: [UInt8] = []

    init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case system(call: String, path: String, errno: Int32)
        case pathTooLong(String)
        case lineTooLong(limit: Int)

        public var description: String {
            switch self {
            case .system(let call, let path, let code): "\(call) \(path): \(String(cString: strerror(code)))"
            case .pathTooLong(let path): "socket path too long: \(path)"
            case .lineTooLong(let limit): "a line longer than \(limit) bytes"
            }
        }

        public var errno: Int32? {
            if case .system(_, _, let code) = self { code } else { nil }
        }
    }

    /// Connects to a listening socket.
    public static func connect(to path: String) throws(Failure) -> UnixSocket {
        let socket = try make(path: path)
        var address = try socketAddress(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                retryingInterrupts { Glibc.connect(socket.descriptor, socketAddress, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
        guard result == 0 else { throw .system(call: "connect", path: path, errno: errno) }
        return socket
    }

    /// Listens at `path`, replacing a stale socket file left by a crash. `mode` is applied to the
    /// socket file (who may connect).
    public static func listen(at path: String, mode: mode_t) throws(Failure) -> UnixSocket {
        let socket = try make(path: path)
        var address = try socketAddress(path)
        unlink(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket.descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw .system(call: "bind", path: path, errno: errno) }
        guard chmod(path, mode) == 0 else { throw .system(call: "chmod", path: path, errno: errno) }
        guard Glibc.listen(socket.descriptor, 16) == 0 else { throw .system(call: "listen", path: path, errno: errno) }
        return socket
    }

    /// Waits for the next client; nil once the socket has been shut down.
    public func accept() -> UnixSocket? {
        while true {
            let client = Glibc.accept(descriptor, nil, nil)
            if client >= 0 {
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                return UnixSocket(descriptor: client)
            }
            if errno == EINTR || errno == ECONNABORTED { continue }
            return nil
        }
    }

    public struct PeerCredentials: Sendable {
        public let pid: pid_t
        public let uid: uid_t
        public let gid: gid_t
    }

    /// The connected peer's process credentials, as the kernel vouches for them.
    public func peerCredentials() -> PeerCredentials? {
        var pid: pid_t = 0, uid: uid_t = 0, gid: gid_t = 0
        guard cvendsystem_peer_credentials(descriptor, &pid, &uid, &gid) == 0 else { return nil }
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
    }

    /// Wakes a thread blocked in `accept` or `readLine` on this socket.
    public func shutDown() {
        Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    public func write(_ text: String) throws(Failure) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { raw in
                retryingInterrupts { send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }
            }
            guard written > 0 else { throw .system(call: "write", path: "control socket", errno: errno) }
            offset += written
        }
        bytes.removeAll()
    }

    /// The next line without its newline; nil at end of stream.
    public func readLine(limit: Int) throws(Failure) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                guard newline <= limit else {
                    buffer.removeSubrange(...newline)
                    throw .lineTooLong(limit: limit)
                }
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            guard buffer.count <= limit else { throw .lineTooLong(limit: limit) }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { raw in
                retryingInterrupts { recv(descriptor, raw.baseAddress, raw.count, 0) }
            }
            if count < 0 { throw .system(call: "read", path: "control socket", errno: errno) }
            if count == 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    private static func make(path: String) throws(Failure) -> UnixSocket {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system(call: "socket", path: path, errno: errno) }
        return UnixSocket(descriptor: descriptor)
    }

    private static func socketAddress(_ path: String) throws(Failure) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw .pathTooLong(path) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }
}

/// Runs a system call again while it is interrupted by a signal.
@inline(__always)
func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}
