import FoundationEssentials
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// The client side of the control socket, for vendctl and the tests.
public final class ControlClient {
    private let socket: UnixSocket
    public let path: String

    /// Why the daemon could not be reached, in words that say what to do.
    public struct ConnectionError: Error, CustomStringConvertible {
        public enum Kind: Sendable { case notRunning, permissionDenied, notAnswering, failed }
        public let kind: Kind
        public let description: String

        init(_ description: String, kind: Kind = .failed) {
            self.kind = kind
            self.description = description
        }
    }

    /// How long to wait for an answer; nil waits as long as it takes.
    private let timeout: Duration?

    public init(path: String, timeout: Duration? = nil) throws(ConnectionError) {
        self.path = path
        self.timeout = timeout
        do {
            socket = try UnixSocket.connect(to: path)
            socket.setTimeout(timeout)
        } catch {
            switch error.errno {
            case ENOENT, ECONNREFUSED:
                throw ConnectionError(
                    "vendd is not running: nothing listens at \(path) (start it with `systemctl start vendd`, or pass --socket)", kind: .notRunning)
            case EACCES:
                throw ConnectionError(Self.permissionDenied(path), kind: .permissionDenied)
            default:
                throw ConnectionError("cannot connect to \(path): \(error)")
            }
        }
    }

    /// Sends one request and waits for its response.
    public func send(_ command: ControlCommand) throws(ConnectionError) -> ControlResponse {
        do {
            try write(ControlRequest(command))
        } catch {
            // vendd may have answered `busy` and hung up before the request went out: read it.
            guard let line = try? readLine(), let busy = try? JSONDecoder().decode(ControlResponse.self, from: Data(line.utf8)) else {
                throw error
            }
            return busy
        }
        guard let line = try readLine() else {
            throw ConnectionError("vendd closed the connection without answering")
        }
        do {
            return try JSONDecoder().decode(ControlResponse.self, from: Data(line.utf8))
        } catch {
            throw ConnectionError("vendd answered something this vendctl does not understand: \(line)")
        }
    }

    /// Subscribes to the event stream, calls `subscribed` once it is, then `handle` for each
    /// event until it returns false or the daemon hangs up. `timeout` bounds the wait for each
    /// event (nil: events come when they come).
    public func watch(timeout: Duration? = nil, subscribed: () throws -> Void = {}, _ handle: (EventLine) -> Bool) throws {
        let response = try send(.watch)
        guard response.ok else {
            throw ConnectionError(response.error?.message ?? "vendd refused to stream events")
        }
        try subscribed()
        socket.setTimeout(timeout)
        while let line = try readLine() {
            if let event = try? JSONDecoder().decode(EventLine.self, from: Data(line.utf8)), !handle(event) { return }
        }
    }

    /// The directory holding `path` ("/" for a top-level entry, "" for a bare name).
    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Names the group that would let the user in: the group of the first directory on the way
    /// that refuses them, or else of the socket itself.
    static func permissionDenied(_ path: String) -> String {
        let directories = sequence(first: parent(of: path)) { directory in
            directory == "/" || directory.isEmpty ? nil : parent(of: directory)
        }.reversed()
        let refusing: String = directories.first { access($0, X_OK) != 0 } ?? path
        var info = stat()
        guard stat(refusing, &info) == 0, let group = getgrgid(info.st_gid) else {
            return "permission denied: \(refusing) does not let you in (check `ls -ld \(refusing)`)"
        }
        let name = String(cString: group.pointee.gr_name)
        return
            "permission denied: \(refusing) is open only to its owner and the '\(name)' group (ask an administrator: usermod -aG \(name) $USER, then log in again)"
    }

    private func write(_ request: ControlRequest) throws(ConnectionError) {
        do {
            let json = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
            try socket.write(json + "\n")
        } catch {
            throw ConnectionError("cannot send to vendd at \(path): \(error)")
        }
    }

    private func readLine() throws(ConnectionError) -> String? {
        do {
            return try socket.readLine(limit: 16 * 1024 * 1024)
        } catch  where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            let waited = timeout.map { "\($0.components.seconds) s" } ?? "the time allowed"
            throw ConnectionError(
                "vendd at \(path) did not answer within \(waited); it may be overloaded or stuck (journalctl -u vendd)", kind: .notAnswering)
        } catch {
            throw ConnectionError("cannot read from vendd at \(path): \(error)")
        }
    }
}
