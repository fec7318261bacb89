/// One HTTP/1.x request as the parser read it: the request line, the header fields and the body
/// (which a `Content-Length` announced; the server refuses every other framing).
public struct HTTPRequest: Sendable, Equatable {
    /// The method as sent (methods are case-sensitive: `get` is not `GET`).
    public let method: String
    /// The request target as sent: `/select/A1?x=1`.
    public let target: String
    /// The target's path, percent-decoded segment by segment: `/pictures/a b` for `/pictures/a%20b`.
    public let path: String
    /// The path's segments, each percent-decoded (a decoded `/` stays inside its segment).
    public let segments: [String]
    /// What follows `?`, as sent; nil when there is no `?`.
    public let query: String?
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public let minorVersion: Int
    /// The header fields in order, names lowercased, values without surrounding spaces.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public init(
        method: String, target: String, path: String, segments: [String], query: String?, minorVersion: Int,
        headers: [(name: String, value: String)], body: [UInt8]
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.segments = segments
        self.query = query
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
    }

    /// The first value of the field `name` (any case), if sent.
    public func header(_ name: String) -> String? {
        let name = name.lowercased()
        return headers.first { $0.name == name }?.value
    }

    /// Whether the connection stays open after the answer: HTTP/1.1 unless `Connection: close`,
    /// HTTP/1.0 only with `Connection: keep-alive`.
    public var keepAlive: Bool {
        let options = headers.filter { $0.name == "connection" }.flatMap { $0.value.lowercased().split(separator: ",") }
            .map { $0.trimmingSpaces }
        if options.contains("close") { return false }
        return minorVersion >= 1 || options.contains("keep-alive")
    }

    public static func == (left: HTTPRequest, right: HTTPRequest) -> Bool {
        left.method == right.method && left.target == right.target && left.path == right.path && left.segments == right.segments
            && left.query == right.query && left.minorVersion == right.minorVersion && left.body == right.body
            && left.headers.map(\.name) == right.headers.map(\.name) && left.headers.map(\.value) == right.headers.map(\.value)
    }
}

extension Substring {
    /// Without the spaces and tabs at either end.
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
