#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The client side of the control socket, for vendctl and the tests.
public final class ControlClient {
    private let socket: UnixSocket
    public let path: String

    /// Why the daemon could not be reached, in words that say what to do.
    public struct ConnectionError: Error, CustomStringConvertible {
        public let description: String
    }

    public init(path: String) throws(ConnectionError) {
        self.path = path
        do {
            socket = try UnixSocket.connect(to: path)
        } catch {
            switch error.errno {
            case ENOENT, ECONNREFUSED:
                throw ConnectionError(description: "vendd is not running: nothing listens at \(path) (start it with `systemctl start vendd`, or pass --socket)")
            case EACCES:
                throw ConnectionError(description: "permission denied opening \(path): the control socket's directory or file does not let you in (check `ls -l \(path)`)")
            default:
                throw ConnectionError(description: "cannot connect to \(path): \(error)")
            }
        }
    }

    /// Sends one request and waits for its response.
    public func send(_ command: ControlCommand) throws(ConnectionError) -> ControlResponse {
        try write(ControlRequest(command))
        guard let line = try readLine() else {
            throw ConnectionError(description: "vendd closed the connection without answering")
        }
        do {
            return try JSONDecoder().decode(ControlResponse.self, from: Data(line.utf8))
        } catch {
            throw ConnectionError(description: "vendd answered something this vendctl does not understand: \(line)")
        }
    }

    /// Subscribes to the event stream and calls `handle` for each event until the daemon hangs up.
    public func watch(_ handle: (EventLine) -> Void) throws(ConnectionError) {
        let response = try send(.watch)
        guard response.ok else {
            throw ConnectionError(description: response.error?.message ?? "vendd refused to stream events")
        }
        while let line = try readLine() {
            if let event = try? JSONDecoder().decode(EventLine.self, from: Data(line.utf8)) { handle(event) }
        }
    }

    private func write(_ request: ControlRequest) throws(ConnectionError) {
        do {
            let json = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
            try socket.write(json + "\n")
        } catch {
            throw ConnectionError(description: "cannot send to vendd at \(path): \(error)")
        }
    }

    private func readLine() throws(ConnectionError) -> String? {
        do {
            return try socket.readLine(limit: 16 * 1024 * 1024)
        } catch {
            throw ConnectionError(description: "cannot read from vendd at \(path): \(error)")
        }
    }
}
