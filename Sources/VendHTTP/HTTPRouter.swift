/// Routes by method and path: `/select/:slot` matches `/select/A1` with `slot` = `A1` (one whole
/// segment). A path no route has is 404; a path some route has, with another method, is 405 with
/// `Allow`. HEAD is answered by the GET route (libmicrohttpd leaves the body out).
public struct HTTPRouter: Sendable {
    public typealias Handler = @Sendable (HTTPRequest, _ parameters: [String: String]) -> HTTPReply

    private struct Route: Sendable {
        let method: String
        let pattern: [String]
        let handler: Handler
    }

    private var routes: [Route] = []

    public init() {}

    public mutating func get(_ pattern: String, _ handler: @escaping Handler) { add("GET", pattern, handler) }
    public mutating func post(_ pattern: String, _ handler: @escaping Handler) { add("POST", pattern, handler) }

    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        precondition(pattern.hasPrefix("/"), "a route's pattern starts with /")
        routes.append(Route(method: method, pattern: Self.segments(pattern), handler: handler))
    }

    /// The reply to `request`: its route's, or 404/405.
    public func reply(to request: HTTPRequest) -> HTTPReply {
        let method = request.method == "HEAD" ? "GET" : request.method
        var allowed: [String] = []
        for route in routes {
            guard let parameters = Self.match(route.pattern, request.segments) else { continue }
            if route.method == method { return route.handler(request, parameters) }
            allowed.append(route.method)
        }
        guard !allowed.isEmpty else { return .response(.error(404)) }
        if allowed.contains("GET") { allowed.append("HEAD") }
        var refusal = HTTPResponse.error(405)
        refusal.headers.append(("Allow", allowed.joined(separator: ", ")))
        return .response(refusal)
    }

    private static func segments(_ pattern: String) -> [String] {
        pattern == "/" ? [] : pattern.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    private static func match(_ pattern: [String], _ segments: [String]) -> [String: String]? {
        guard pattern.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (part, segment) in zip(pattern, segments) {
            if part.hasPrefix(":") {
                guard !segment.isEmpty else { return nil }
                parameters[String(part.dropFirst())] = segment
            } else if part != segment {
                return nil
            }
        }
        return parameters
    }
}
