import CMicroHTTPDShim
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// libmicrohttpd listening with its internal thread (epoll on Linux), which parses every request
/// and hands each complete one to `handler`: on that thread, one at a time (`.serverThread`), or
/// on a thread of its own while the connection waits suspended (`.threadPerRequest`: a handler
/// may wait on vendd). libmicrohttpd does the HTTP/1.1 (keep-alive, pipelining, HEAD, 400 for
/// what is malformed, 414 and 431 for heads beyond `connectionMemory`); the shim answers an
/// HTTP/1.1 request without Host 400, a chunked body 411 and a `Content-Length` over `maxBody`
/// 413, each before the body is read and with the connection closed.
/// Unchecked: `server` and `context` are set once, and only `stop()` (once, by the owner) uses
/// them after that.
public final class HTTPServer: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public enum Dispatch: Sendable {
        /// On libmicrohttpd's thread, one request at a time: handlers that never wait long.
        case serverThread
        /// A thread per request being handled: a handler that waits holds no other client.
        case threadPerRequest
    }

    public struct Limits: Sendable {
        /// Bodies above this are answered 413.
        public var maxBody = 64 * 1024
        /// Connections at once; libmicrohttpd leaves more waiting in the kernel's backlog.
        public var connections = 256
        /// No byte read or written for this long: closed (a half request, an idle keep-alive, a
        /// client that stopped reading). A stream waiting for its next event does not count.
        public var timeoutSeconds = 30
        /// Each connection's memory: its request line and header section must fit.
        public var connectionMemory = 32 * 1024
        /// Event streams at once (503 beyond: a browser's EventSource tries again).
        public var streams = 8
        /// Events a slow stream client has not taken; older ones are dropped first.
        public var streamBacklog = 4
        /// A comment on every stream this often, which finds out clients that went away.
        public var heartbeatSeconds = 15
        /// The request headers and query arguments handlers read (`HTTPRequest.headers`, `query`).
        public var headers: [String] = []
        public var arguments: [String] = []

        public init() {}

        var c: vhttp_limits {
            vhttp_limits(
                max_body: maxBody, connections: UInt32(connections), timeout_seconds: UInt32(timeoutSeconds),
                connection_memory: connectionMemory, streams: UInt32(streams), stream_backlog: UInt32(streamBacklog),
                heartbeat_seconds: UInt32(heartbeatSeconds))
        }
    }

    private final class Context: Sendable {
        let handler: @Sendable (HTTPRequest) -> HTTPReply
        let limits: Limits
        let dispatch: Dispatch
        init(_ handler: @escaping @Sendable (HTTPRequest) -> HTTPReply, limits: Limits, dispatch: Dispatch) {
            self.handler = handler
            self.limits = limits
            self.dispatch = dispatch
        }
    }

    private let server: OpaquePointer
    private let context: Unmanaged<Context>
    public let port: Int

    /// `127.0.0.1:8080`, `[::1]:8080`: where it listens, with the real port.
    public let address: String

    /// Event streams open now.
    public var streams: Int { Int(vhttp_stream_count(server)) }

    /// Listens on `address` (an IPv4 or IPv6 literal) and `port` (0: the kernel picks one) and
    /// serves at once.
    public init(
        address: String, port: Int, limits: Limits = Limits(), dispatch: Dispatch = .serverThread,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPReply
    ) throws(Failure) {
        let context = Unmanaged.passRetained(Context(handler, limits: limits, dispatch: dispatch))
        var error = [CChar](repeating: 0, count: 256)
        guard
            let server = vhttp_start(
                address, UInt32(port), limits.c,
                { raw, request in
                    guard let raw, let request else { return }
                    HTTPServer.handle(request, Unmanaged<Context>.fromOpaque(raw).takeUnretainedValue())
                }, context.toOpaque(), &error, error.count)
        else {
            context.release()
            throw Failure(description: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        self.server = server
        self.context = context
        self.port = Int(vhttp_port(server))
        self.address = address.contains(":") ? "[\(address)]:\(self.port)" : "\(address):\(self.port)"
    }

    /// Routes with `router`.
    public convenience init(address: String, port: Int, limits: Limits = Limits(), dispatch: Dispatch = .serverThread, router: HTTPRouter)
        throws(Failure)
    {
        try self.init(address: address, port: port, limits: limits, dispatch: dispatch) { router.reply(to: $0) }
    }

    /// Waits for the handlers under way, ends every stream, closes every connection and stops
    /// the thread: no request is handled after it returns.
    public func stop() {
        vhttp_stop(server)
        context.release()
    }

    private static func handle(_ request: OpaquePointer, _ context: Context) {
        let read = read(request, context.limits)
        // The pointer crosses to the handler's thread as an address: the shim keeps the request
        // until it is answered, and nothing else touches it meanwhile.
        let address = UInt(bitPattern: request)
        guard context.dispatch == .threadPerRequest, vhttp_defer(request) == 0 else {
            return answer(request, with: context.handler(read))
        }
        PosixThread.start(name: "vendd-http-req") {
            answer(OpaquePointer(bitPattern: address)!, with: context.handler(read))
        }
    }

    private static func read(_ request: OpaquePointer, _ limits: Limits) -> HTTPRequest {
        var headers: [String: String] = [:]
        for name in limits.headers {
            if let value = vhttp_header(request, name) { headers[name] = String(cString: value) }
        }
        var query: [String: String] = [:]
        for name in limits.arguments {
            if let value = vhttp_argument(request, name) { query[name] = String(cString: value) }
        }
        var length = 0
        let bytes = vhttp_body(request, &length)
        let body = bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
        return HTTPRequest(
            method: String(cString: vhttp_method(request)), path: String(cString: vhttp_path(request)), headers: headers, query: query, body: body,
            peer: String(cString: vhttp_client_address(request)))
    }

    private static func answer(_ request: OpaquePointer, with reply: HTTPReply) {
        switch reply {
        case .response(let response):
            withHeaders(response.headers) { headers, count in
                response.body.withUnsafeBytes { body in
                    _ = vhttp_respond(request, UInt32(response.status), headers, count, body.baseAddress, body.count)
                }
            }
        case .events(let broadcast):
            let opened = withHeaders([("Content-Type", "text/event-stream"), ("Cache-Control", "no-store")]) { headers, count in
                vhttp_respond_stream(request, headers, count)
            }
            guard let opened else {
                return answer(request, with: .response(.error(503, "too many event streams; try again later")))
            }
            broadcast.subscribe(EventStream(opened))
        }
    }

    /// `headers` as the C strings the shim takes: names and values alternately.
    private static func withHeaders<Result>(
        _ headers: [(String, String)], _ body: (UnsafePointer<UnsafePointer<CChar>?>?, Int) -> Result
    ) -> Result {
        let texts = headers.flatMap { [$0.0, $0.1] }
        var pointers: [UnsafeMutablePointer<CChar>?] = texts.map { strdup($0) }
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { body(UnsafePointer($0.baseAddress), $0.count) }
        }
    }
}

/// One client's event stream: the shim's, released when the broadcast lets it go. Unchecked:
/// the shim locks the stream itself.
final class EventStream: @unchecked Sendable {
    private let stream: OpaquePointer

    init(_ stream: OpaquePointer) { self.stream = stream }

    deinit { vhttp_stream_release(stream) }

    /// Queues one whole message; false once the client has gone.
    func send(_ message: [UInt8]) -> Bool {
        var dropped: UInt32 = 0
        return message.withUnsafeBytes { vhttp_stream_send(stream, $0.baseAddress, $0.count, &dropped) } == 0
    }
}
