import FoundationEssentials
import Logging
import Synchronization
import VendControl
import VendPOSIX
import VendPollServer
import VendTime

/// The control socket: JSON lines (`ControlProtocol`) on a `PollServer`, which owns the
/// connections, their limits and deadlines. A request is handled on the server's thread and
/// answered after its effects (the handler returns once the machine has carried them out).
/// Nothing a client does can hold the machine: a request is one input in the machine's inbox,
/// like a button press, and the machine's lane never waits for a client (a `watch` line is only
/// handed over).
///
/// What a hostile or broken local client cannot do, beyond what `PollServer` stops: send a line
/// longer than `ControlProtocol.maximumRequestBytes` (refused, closed), or take more than
/// `watchers` event streams (`busy`).
final class ControlServer: Sendable {
    typealias Handler = @Sendable (ControlRequest, UnixSocket.PeerCredentials?) -> ControlResponse

    struct Limits: Sendable {
        /// Connections at once. vendctl connects, asks and hangs up within milliseconds.
        var clients = 64
        /// Of those, `watch` streams (the display and technicians following events).
        var watchers = 16
        /// From a request line's first byte to its newline.
        var partialLineTimeout: Duration = .seconds(5)
        /// Between requests, and for an answer not taken.
        var idleTimeout: Duration = .seconds(60)
        /// A client this new is not hung up to make room: it has not had time to ask.
        var evictionGrace: Duration = .milliseconds(250)
        /// A watcher this far behind is disconnected rather than buffered without end.
        var watchBacklogBytes = 1 << 20

        var server: PollServer.Limits {
            PollServer.Limits(
                connections: clients, idleTimeout: idleTimeout, requestTimeout: partialLineTimeout, writeTimeout: idleTimeout,
                lingerTimeout: .seconds(2), evictionGrace: evictionGrace, inputBytes: ControlProtocol.maximumRequestBytes + 1,
                streamOutputBytes: watchBacklogBytes)
        }
    }

    let path: String
    private let listener: UnixSocket
    private let handler: Handler
    private let events: EventFanOut
    private let logger: Logger
    private let limits: Limits
    private let timekeeper: any Timekeeper
    private let handle: PollServerHandle
    /// Event lines for watchers by connection, handed over by the publishing thread.
    private let watchOutput = Mutex<[Int: [UInt8]]>([:])

    /// Listens at `path` with mode 0666: anyone local may ask; the handler checks who may change.
    init(
        path: String, logger: Logger, timekeeper: any Timekeeper, handler: @escaping Handler, events: EventFanOut, limits: Limits = Limits()
    ) throws(UnixSocket.Failure) {
        self.path = path
        listener = try UnixSocket.listen(at: path, mode: 0o666)
        try listener.makeNonBlocking()
        do {
            handle = try PollServerHandle()
        } catch {
            throw .system(error)
        }
        self.handler = handler
        self.events = events
        self.logger = logger
        self.limits = limits
        self.timekeeper = timekeeper
    }

    func start() {
        PosixThread.start(name: "vendd-control") { [self] in
            PollServer(listener: listener.descriptor, limits: limits.server, timekeeper: timekeeper, handle: handle, delegate: Lines(server: self))
                .run()
        }
    }

    /// Stops serving: every client hung up, the socket file removed if it is still this
    /// server's (never another vendd's that replaced it).
    func stop() {
        handle.stop()
        listener.removeFile()
    }

    /// The protocol on the server's thread: only that thread touches it.
    private final class Lines: PollServerDelegate {
        let server: ControlServer
        var peers: [Int: UnixSocket.PeerCredentials] = [:]
        var watching: [Int: EventFanOut.SubscriptionID] = [:]

        init(server: ControlServer) {
            self.server = server
        }

        func opened(_ connection: PollConnection, on _: PollServer) {
            peers[connection.id] = UnixSocket.peerCredentials(of: connection.descriptor)
        }

        func received(_ connection: PollConnection, on poll: PollServer) {
            let maximum = ControlProtocol.maximumRequestBytes
            while connection.phase == .reading, let newline = connection.input.firstIndex(of: UInt8(ascii: "\n")) {
                guard newline <= maximum else { return refuseLongLine(connection) }
                let line = String(decoding: connection.input[..<newline], as: UTF8.self)
                connection.consume(newline + 1)
                switch ControlRequest.decode(line: line) {
                case .failure(let error):
                    reply(.failure(error), to: connection)
                case .success(let request) where request.command == .watch:
                    startWatching(connection, on: poll)
                case .success(let request):
                    reply(server.handler(request, peers[connection.id]), to: connection)
                }
            }
            if connection.phase == .reading, connection.input.count > maximum { refuseLongLine(connection) }
        }

        func refuseLongLine(_ connection: PollConnection) {
            reply(.failure(ControlError(.badRequest, "request longer than \(ControlProtocol.maximumRequestBytes) bytes")), to: connection)
            connection.close()
        }

        func startWatching(_ connection: PollConnection, on poll: PollServer) {
            guard watching.count < server.limits.watchers else {
                reply(
                    .failure(ControlError(.busy, "vendd already streams events to \(watching.count) watchers, its limit; try again later")),
                    to: connection)
                return connection.close()
            }
            reply(.success("watching; one line per event"), to: connection)
            connection.stream()
            let (server, id) = (server, connection.id)
            watching[id] = server.events.subscribe { event in
                guard let json = try? JSONEncoder().encode(event) else { return }
                server.watchOutput.withLock { $0[id, default: []] += json + [UInt8(ascii: "\n")] }
                server.handle.wake()
            }
        }

        func reply(_ response: ControlResponse, to connection: PollConnection) {
            connection.send(Self.line(response))
        }

        static func line(_ response: ControlResponse) -> [UInt8] {
            guard let json = try? JSONEncoder().encode(response) else { return [] }
            return json + [UInt8(ascii: "\n")]
        }

        func requestTimedOut(_ connection: PollConnection, on poll: PollServer) {
            let seconds = poll.limits.requestTimeout.wholeMilliseconds / 1000
            reply(.failure(ControlError(.badRequest, "no complete request line within \(seconds) s; closing")), to: connection)
        }

        func closed(_ connection: PollConnection, on _: PollServer) {
            peers[connection.id] = nil
            if let subscription = watching.removeValue(forKey: connection.id) {
                server.events.unsubscribe(subscription)
                _ = server.watchOutput.withLock { $0.removeValue(forKey: connection.id) }
            }
        }

        func refusal(_ reason: PollServer.Refusal, on _: PollServer) -> [UInt8] {
            switch reason {
            case .full(let connections):
                Self.line(.failure(ControlError(.busy, "vendd is serving \(connections) clients, its limit; try again in a moment")))
            case .outOfResources(let error):
                Self.line(.failure(ControlError(.busy, "vendd cannot take more connections now (\(error.reason)); try again in a moment")))
            }
        }

        func collect(on poll: PollServer) {
            let pending = server.watchOutput.withLock { pending in
                defer { pending.removeAll() }
                return pending
            }
            for (id, bytes) in pending { poll.connection(id)?.send(bytes) }
        }

        func report(_ event: PollServer.Event, on _: PollServer) {
            switch event {
            case .cannotAccept(let error):
                server.logger.error(
                    "control socket: cannot accept a client (\(error.reason)); the longest-idle clients are hung up to make room. Is a local program opening connections without end? (ls -l /proc/$(pidof vendd)/fd)"
                )
            case .fellBehind(let bytes):
                server.logger.warning("control socket: a watch client fell \(bytes) bytes behind; disconnected")
            case .pollFailed(let error):
                server.logger.error("control socket: \(error); serving again in 1 s")
            case .refused, .evicted:
                break
            }
        }
    }
}
