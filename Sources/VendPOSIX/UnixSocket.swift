import CVendSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A stream socket in the file system: the control socket on both sides, and bridges to serial
/// devices. Blocking I/O unless a user sets O_NONBLOCK on `descriptor`.
public final class UnixSocket: @unchecked Sendable {
    // @unchecked: the descriptor is used by one thread at a time (a connection's reader, or its
    // writer under the owner's lock), and `close` is idempotent.
    public let descriptor: Int32
    private var buffer: [UInt8] = []
    /// The socket file a listener made, and its identity: what `removeFile` may remove.
    private var boundFile: (path: String, device: UInt64, inode: UInt64)?

    init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case system(SystemError)
        case pathTooLong(String)
        case lineTooLong(limit: Int)
        /// A program listens at the path and answered: its socket is not taken over.
        case inUse(path: String, by: Listener)

        public var description: String {
            switch self {
            case .system(let error): "\(error)"
            case .pathTooLong(let path): "socket path too long: \(path)"
            case .lineTooLong(let limit): "a line longer than \(limit) bytes"
            case .inUse(let path, let listener): "\(listener) answers on \(path)"
            }
        }

        public var errno: Int32? {
            if case .system(let error) = self { error.errno } else { nil }
        }
    }

    /// Connects to a listening socket.
    public static func connect(to path: String) throws(Failure) -> UnixSocket {
        let address = try UnixSocketAddress(path: path)
        let socket = try make(path: path)
        try call("connect", path) { address.withSocketAddress { Glibc.connect(socket.descriptor, $0, $1) } }
        return socket
    }

    /// The program found listening on a socket: who the kernel says it is, when it says.
    public struct Listener: Sendable, Equatable, CustomStringConvertible {
        public let pid: pid_t?
        /// Its command line (from /proc), when readable: it names its state directory if given.
        public let commandLine: String?

        public var description: String {
            guard let pid else { return "a program" }
            return "process \(pid)\(commandLine.map { " (\($0))" } ?? "")"
        }
    }

    /// Who listens at `path`: nil when nobody answers (no file, or a stale one left by a crash).
    public static func listener(at path: String) -> Listener? {
        guard let socket = try? connect(to: path) else { return nil }
        let pid = socket.peerCredentials()?.pid
        return Listener(pid: pid, commandLine: pid.flatMap(commandLine(of:)))
    }

    /// Listens at `path`, replacing a stale socket file left by a crash, but never one a live
    /// program answers on (`inUse`). `mode` is applied to the socket file (who may connect).
    public static func listen(at path: String, mode: mode_t) throws(Failure) -> UnixSocket {
        let address = try UnixSocketAddress(path: path)
        let socket = try make(path: path)
        if let listener = listener(at: path) { throw .inUse(path: path, by: listener) }
        unlink(path)
        try call("bind", path) { address.withSocketAddress { bind(socket.descriptor, $0, $1) } }
        try call("chmod", path) { chmod(path, mode) }
        // A burst of clients waits in the kernel's queue rather than being refused at once.
        try call("listen", path) { Glibc.listen(socket.descriptor, 128) }
        if let identity = fileIdentity(path) { socket.boundFile = (path, identity.device, identity.inode) }
        return socket
    }

    /// Removes the socket file this listener made, unless it is no longer that file (another
    /// program replaced it: its socket is left alone). True when removed.
    @discardableResult
    public func removeFile() -> Bool {
        guard let bound = boundFile, let now = Self.fileIdentity(bound.path), now == (bound.device, bound.inode) else { return false }
        return unlink(bound.path) == 0
    }

    private static func fileIdentity(_ path: String) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// /proc/PID/cmdline with spaces for its NULs; nil when unreadable (another user's, gone).
    private static func commandLine(of pid: pid_t) -> String? {
        let descriptor = open("/proc/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let arguments = bytes[..<count].split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        return arguments.isEmpty ? nil : arguments.joined(separator: " ")
    }

    /// Waits for the next client; nil once the socket has been shut down.
    public func accept() -> UnixSocket? {
        while true {
            do {
                let client = try systemCall("accept") { Glibc.accept(descriptor, nil, nil) }
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                return UnixSocket(descriptor: client)
            } catch  where error.errno == ECONNABORTED {
                continue
            } catch {
                return nil
            }
        }
    }

    /// Makes a blocking read or write give up with EAGAIN after `timeout` (nil: wait forever).
    public func setTimeout(_ timeout: Duration?) {
        let (seconds, attoseconds) = (timeout ?? .zero).components
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    // MARK: Non-blocking use, for a server that polls

    /// Makes the socket non-blocking: a listener for a server that polls, or a client's end.
    public func makeNonBlocking() throws(Failure) {
        let flags = fcntl(descriptor, F_GETFL)
        try call("fcntl", "socket") { fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
    }

    /// What is there to read now, at most `limit` bytes: empty when nothing is (EAGAIN), nil at
    /// end of stream.
    public func receiveAvailable(limit: Int = 4096) throws(Failure) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: limit)
        do {
            let count = try systemCall("recv", "control socket") {
                chunk.withUnsafeMutableBytes { raw in recv(descriptor, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT)) }
            }
            return count == 0 ? nil : Array(chunk[..<count])
        } catch  where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return []
        } catch {
            throw .system(error)
        }
    }

    /// Sends what the socket takes now; returns how many bytes (0 when it takes none).
    public func sendAvailable(_ bytes: ArraySlice<UInt8>) throws(Failure) -> Int {
        do {
            return try systemCall("send", "control socket") {
                bytes.withUnsafeBytes { raw in send(descriptor, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
        } catch  where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return 0
        } catch {
            throw .system(error)
        }
    }

    public struct PeerCredentials: Sendable {
        public let pid: pid_t
        public let uid: uid_t
        public let gid: gid_t
    }

    /// The connected peer's process credentials, as the kernel vouches for them.
    public func peerCredentials() -> PeerCredentials? { Self.peerCredentials(of: descriptor) }

    /// The credentials of the process at the other end of a connected Unix socket's `descriptor`.
    public static func peerCredentials(of descriptor: Int32) -> PeerCredentials? {
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
            offset += try call("write", "control socket") {
                bytes.withUnsafeMutableBytes { raw in send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }
            }
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
            let count = try call("read", "control socket") {
                chunk.withUnsafeMutableBytes { raw in recv(descriptor, raw.baseAddress, raw.count, 0) }
            }
            if count == 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Two connected sockets with no file: a device simulated in-process at one end, its real
    /// driver at the other.
    public static func pair() throws(Failure) -> (UnixSocket, UnixSocket) {
        var descriptors: [Int32] = [-1, -1]
        try call("socketpair", "in-process link") {
            socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &descriptors)
        }
        return (UnixSocket(descriptor: descriptors[0]), UnixSocket(descriptor: descriptors[1]))
    }

    private static func make(path: String) throws(Failure) -> UnixSocket {
        UnixSocket(
            descriptor: try call("socket", path) {
                socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            })
    }
}

/// `systemCall`, its error told as the socket's `Failure`.
@discardableResult
private func call<Result: BinaryInteger>(_ name: String, _ path: String, _ body: () -> Result) throws(UnixSocket.Failure) -> Result {
    do {
        return try systemCall(name, path, body)
    } catch {
        throw .system(error)
    }
}
