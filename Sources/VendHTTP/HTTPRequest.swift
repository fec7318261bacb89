/// A request as a handler reads it: what libmicrohttpd parsed, the body whole.
public struct HTTPRequest: Sendable {
    public let method: String
    /// Percent-decoded, without the query.
    public let path: String
    /// The headers the server was told to read (`HTTPServer.Limits.headers`), names lower-case.
    public let headers: [String: String]
    /// The query arguments the server was told to read (`HTTPServer.Limits.arguments`), percent-decoded.
    public let query: [String: String]
    public let body: [UInt8]
    /// The peer's address ("127.0.0.1", "::1").
    public let peer: String

    public init(method: String, path: String, headers: [String: String] = [:], query: [String: String] = [:], body: [UInt8] = [], peer: String) {
        self.method = method
        self.path = path
        self.headers = headers
        self.query = query
        self.body = body
        self.peer = peer
    }

    /// The path's segments: `/select/A1` is `["select", "A1"]`, `/` none.
    public var segments: [String] {
        path == "/" ? [] : path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }
}
