#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Synchronization
import VendControl
import VendPOSIX

/// Serves the control socket: a thread accepts connections and each connection gets a thread
/// that reads request lines and writes response lines. The handler runs on that thread and
/// returns once the request's effects are carried out, so an answer is never seen before them.
final class ControlServer: Sendable {
    typealias Handler = @Sendable (ControlRequest, UnixSocket.PeerCredentials?) -> ControlResponse

    let path: String
    private let listener: UnixSocket
    private let handler: Handler
    private let events: EventFanOut
    private let logger: Logger
    private let connections = Mutex<[ObjectIdentifier: UnixSocket]>([:])

    /// Listens at `path` with mode 0666: anyone local may ask; the handler checks who may change.
    init(path: String, logger: Logger, handler: @escaping Handler, events: EventFanOut) throws(UnixSocket.Failure) {
        self.path = path
        listener = try UnixSocket.listen(at: path, mode: 0o666)
        self.handler = handler
        self.events = events
        self.logger = logger
    }

    func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "vendd-control"
        thread.start()
    }

    /// Stops accepting, hangs up every client and removes the socket file.
    func stop() {
        listener.shutDown()
        for connection in connections.withLock({ Array($0.values) }) { connection.shutDown() }
        unlink(path)
    }

    private func acceptLoop() {
        while let connection = listener.accept() {
            connections.withLock { $0[ObjectIdentifier(connection)] = connection }
            let thread = Thread { [self] in
                serve(connection)
                connections.withLock { $0[ObjectIdentifier(connection)] = nil }
            }
            thread.name = "vendd-client"
            thread.start()
        }
    }

    private func serve(_ connection: UnixSocket) {
        let peer = connection.peerCredentials()
        while true {
            let line: String?
            do {
                line = try connection.readLine(limit: ControlProtocol.maximumRequestBytes)
            } catch UnixSocket.Failure.lineTooLong(let limit) {
                reply(.failure(ControlError(.badRequest, "request longer than \(limit) bytes")), on: connection)
                return
            } catch {
                return
            }
            guard let line else { return }
            let request: ControlRequest
            switch Self.decode(line) {
            case .success(let decoded): request = decoded
            case .failure(let error):
                reply(.failure(error), on: connection)
                continue
            }
            if request.command == .watch {
                stream(to: connection)
                return
            }
            reply(handler(request, peer), on: connection)
        }
    }

    /// A line that is not a valid request gets an error naming what is wrong; the connection and
    /// the machine carry on.
    static func decode(_ line: String) -> Result<ControlRequest, ControlError> {
        let data = Data(line.utf8)
        struct VersionOnly: Decodable { let v: Int }
        if let version = try? JSONDecoder().decode(VersionOnly.self, from: data), version.v != ControlProtocol.version {
            return .failure(ControlError(.unsupportedVersion,
                                         "protocol version \(version.v) is not supported; this vendd speaks version \(ControlProtocol.version)"))
        }
        do {
            return .success(try JSONDecoder().decode(ControlRequest.self, from: data))
        } catch let DecodingError.dataCorrupted(context) {
            return .failure(ControlError(.badRequest, context.codingPath.isEmpty
                ? #"not a JSON request line (expected {"v":1,"op":"status"} and the like)"#
                : context.debugDescription))
        } catch let DecodingError.keyNotFound(key, _) {
            return .failure(ControlError(.badRequest, "missing '\(key.stringValue)'"))
        } catch let DecodingError.typeMismatch(_, context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            return .failure(ControlError(.badRequest, "'\(key)' has the wrong type"))
        } catch {
            return .failure(ControlError(.badRequest, "not a JSON request line: \(error)"))
        }
    }

    private func stream(to connection: UnixSocket) {
        let (id, events) = self.events.subscribe()
        reply(.success("watching; one line per event"), on: connection)
        let writer = Task {
            let encoder = JSONEncoder()
            for await event in events {
                guard let json = try? encoder.encode(event),
                      (try? connection.write(String(decoding: json, as: UTF8.self) + "\n")) != nil else { break }
            }
            connection.shutDown()
        }
        // The client sends nothing more; reading returns when it hangs up.
        while (try? connection.readLine(limit: ControlProtocol.maximumRequestBytes)) != nil {}
        writer.cancel()
        self.events.unsubscribe(id)
    }

    private func reply(_ response: ControlResponse, on connection: UnixSocket) {
        guard let json = try? JSONEncoder().encode(response) else { return }
        do {
            try connection.write(String(decoding: json, as: UTF8.self) + "\n")
        } catch {
            logger.debug("control client went away: \(error)")
        }
    }
}
