import CMicroHTTPDShim

/// A whole answer: status, header fields, body. libmicrohttpd adds `Content-Length`, `Date` and
/// `Connection`, and leaves the body out for HEAD.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// `text` with its content type.
    public init(status: Int = 200, text: String, type: String) {
        self.init(status: status, headers: [("Content-Type", type)], body: Array(text.utf8))
    }

    /// A refusal with its reason as plain text (the status's own phrase when none is given).
    public static func error(_ status: Int, _ reason: String? = nil) -> HTTPResponse {
        HTTPResponse(status: status, text: (reason ?? String(cString: vhttp_reason(UInt32(status)))) + "\n", type: "text/plain; charset=utf-8")
    }
}

/// What a handler answers: a whole response, or a stream of server-sent events.
public enum HTTPReply: Sendable {
    case response(HTTPResponse)
    /// `200 text/event-stream`: the broadcast's latest event at once, then every new one, until
    /// the client goes (503 when `HTTPServer.Limits.streams` are open).
    case events(HTTPEventBroadcast)
}
