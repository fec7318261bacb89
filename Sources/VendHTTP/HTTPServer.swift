import Synchronization
import VendPOSIX
import VendPollServer
import VendTime

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 server: HTTP on a `PollServer` (one thread in poll(2), as vendd's control socket
/// is), which owns the connections, their limits and deadlines. A request is answered by its
/// route's handler on a thread of its own (a handler may wait on vendd); the answer is written
/// by the server's thread. Keep-alive and pipelined requests are answered in order, one at a time.
///
/// What a hostile or broken client cannot do: send a request line, header section or body over
/// the limits (414, 431, 413; read no further), send what is not HTTP/1.x (400, 505), hold a
/// connection with half a request (`headerTimeout` from its first byte, however slowly it drips:
/// 408), sit on an idle connection (`idleTimeout`), stall a response or an event stream
/// (`writeTimeout` without progress: hung up), take more than `connections` connections (the
/// longest-idle one not being answered, half a request or a closing one included, is hung up
/// for a newcomer, or the newcomer gets 503) or `streams` event streams (503: a browser's
/// EventSource tries again), or end the accept loop (EMFILE and the like: `PollServer`). An
/// event stream's client that went away is noticed by its hang-up, a failed write, or a stall
/// of the heartbeat comment sent every `heartbeat`.
public final class HTTPServer: Sendable {
    public struct Limits: Sendable {
        public var parser = HTTPRequestParser.Limits()
        /// Connections at once; a kiosk has one browser, a technician's may be another.
        public var connections = 32
        /// Of those, event streams.
        public var streams = 8
        /// From a request's first byte to its last.
        public var headerTimeout: Duration = .seconds(10)
        /// Between requests on a kept-alive connection.
        public var idleTimeout: Duration = .seconds(60)
        /// Output waiting this long without a byte taken: the client is gone or not reading.
        public var writeTimeout: Duration = .seconds(30)
        /// After an error answer, how long unread input is drained before closing (so the client
        /// reads the answer rather than a reset).
        public var lingerTimeout: Duration = .seconds(2)
        /// An event stream with nothing to say sends a comment this often.
        public var heartbeat: Duration = .seconds(15)
        /// Events waiting for a slow stream client; older ones are dropped first.
        public var streamBacklog = 4
        /// A connection this new is not hung up to make room for another.
        public var evictionGrace: Duration = .milliseconds(250)

        public init() {}

        /// The most a request can hold: what is read before it is answered (or refused).
        var maximumRequestBytes: Int { parser.requestLine + parser.headerBytes + parser.body + 16 }

        var server: PollServer.Limits {
            PollServer.Limits(
                connections: connections, idleTimeout: idleTimeout, requestTimeout: headerTimeout, writeTimeout: writeTimeout,
                lingerTimeout: lingerTimeout, evictionGrace: evictionGrace, inputBytes: maximumRequestBytes + 1)
        }
    }

    /// Counts for tests and diagnostics.
    public struct Statistics: Sendable, Equatable {
        public var connections = 0
        public var streams = 0
        /// Connections refused with 503 or hung up for a newcomer.
        public var refused = 0
        public var evicted = 0
        /// Stream events a slow client never got (a newer one replaced them).
        public var droppedEvents = 0
    }

    /// `127.0.0.1:8080`, `[::1]:8080`: the address and the real port.
    public var address: String { listener.address }
    public var port: Int { listener.port }
    public var statistics: Statistics { stats.withLock { $0 } }

    /// The real clock for servers not given one: one timer thread for every server in the process.
    public static let systemTime = SystemTimekeeper(threadName: "vendd-http-time")

    let listener: TCPListener
    let router: HTTPRouter
    let limits: Limits
    let serverName: String
    let timekeeper: any Timekeeper
    let handle: PollServerHandle
    let mailbox = Mutex(Mailbox())
    let stats = Mutex(Statistics())

    struct Mailbox {
        /// Handlers' answers, by connection.
        var replies: [(connection: Int, reply: HTTPRouter.Reply)] = []
        /// Stream events, by connection, at most `streamBacklog` each.
        var events: [Int: [[UInt8]]] = [:]
        var dropped = 0
    }

    /// Listens at `address` (an IPv4 or IPv6 literal) and `port` (0: the kernel picks one; `port`
    /// says which). Serving starts with `run` or `start`.
    public init(
        address: String, port: Int, router: HTTPRouter, serverName: String = "vendd", limits: Limits = Limits(),
        timekeeper: any Timekeeper = HTTPServer.systemTime
    ) throws(HTTPServerError) {
        listener = try TCPListener(address: address, port: port)
        do {
            handle = try PollServerHandle()
        } catch {
            throw .system(error)
        }
        self.router = router
        self.limits = limits
        self.serverName = serverName
        self.timekeeper = timekeeper
    }

    /// Serves on the calling thread until `stop`.
    public func run() {
        PollServer(
            listener: listener.descriptor, limits: limits.server, timekeeper: timekeeper, handle: handle, delegate: HTTPConnections(server: self)
        )
        .run()
    }

    /// Serves on a thread of its own.
    public func start() {
        PosixThread.start(name: "vendd-http") { [self] in run() }
    }

    /// Stops serving and hangs up every client; returns once the loop has ended.
    public func stop() {
        handle.stop()
    }

    /// Hands `reply` to the server's thread for `connection`.
    func deliver(_ reply: HTTPRouter.Reply, to connection: Int) {
        mailbox.withLock { $0.replies.append((connection, reply)) }
        handle.wake()
    }

    /// A stream event for `connection`, from the publishing thread.
    func deliver(event: [UInt8], to connection: Int) {
        let backlog = limits.streamBacklog
        mailbox.withLock { mailbox in
            var pending = mailbox.events[connection, default: []]
            pending.append(event)
            if pending.count > backlog {
                mailbox.dropped += pending.count - backlog
                pending.removeFirst(pending.count - backlog)
            }
            mailbox.events[connection] = pending
        }
        handle.wake()
    }
}
