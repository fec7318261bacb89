import Foundation

/// A plain HTTP/1.1 client for the office tests: one request per connection (Connection:
/// close), the answer read to its end. Keeps cookies as a browser would for one site. The office
/// tests (VendFleetStoreTests) and the live fleet's (VenddProcessTests) drive it.
public struct OfficeHTTPClient: Sendable {
    public struct Answer: Sendable {
        public let status: Int
        public let headers: [(String, String)]
        public let body: String

        public func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        public var cookies: [String] { headers.filter { $0.0.lowercased() == "set-cookie" }.map(\.1) }
        /// The value of the form's hidden `csrf` field.
        public var csrf: String? {
            guard let range = body.range(of: "name=\"csrf\" value=\"") else { return nil }
            return String(body[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    public let port: Int
    public var jar: [String: String] = [:]
    public var headers: [String: String] = [:]

    public init(port: Int) { self.port = port }

    public mutating func get(_ path: String) throws -> Answer { try send("GET", path, body: nil) }

    public mutating func post(_ path: String, _ fields: [(String, String)]) throws -> Answer {
        try send("POST", path, body: fields.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&"))
    }

    /// Logs in through the login page's form (its CSRF token and cookie); the answer to the POST.
    public mutating func logIn(_ user: String, _ password: String) throws -> Answer {
        let page = try get("/login")
        return try post("/login", [("csrf", page.csrf ?? ""), ("user", user), ("password", password)])
    }

    public static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    public mutating func send(_ method: String, _ path: String, body: String?) throws -> Answer {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if !jar.isEmpty { request += "Cookie: \(jar.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if let body {
            request += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            request += "\r\n"
        }
        let answer = try Self.exchange(port, Array(request.utf8))
        for cookie in answer.cookies {
            let pair = cookie.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0])
            let value = pair.count > 1 ? String(pair[1]) : ""
            if value.isEmpty || cookie.contains("Max-Age=0") { jar[name] = nil } else { jar[name] = value }
        }
        return answer
    }

    /// A TCP connection to the office on 127.0.0.1, its descriptor; the caller closes it.
    public static func connectLoopback(_ port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw OfficeTestError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let error = errno
            close(fd)
            throw OfficeTestError("connect to 127.0.0.1:\(port): errno \(error)")
        }
        return fd
    }

    private static func exchange(_ port: Int, _ request: [UInt8]) throws -> Answer {
        let fd = try connectLoopback(port)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { throw OfficeTestError("write: errno \(errno)") }
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count >= 0 else { throw OfficeTestError("read: errno \(errno)") }
            if count == 0 { break }
            received += buffer[0..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { throw OfficeTestError("no HTTP header in: \(text)") }
        let lines = text[..<end.lowerBound].components(separatedBy: "\r\n")
        guard let status = lines.first?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw OfficeTestError("no status line in: \(text)")
        }
        let headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Answer(status: status, headers: headers, body: String(text[end.upperBound...]))
    }
}

public struct OfficeTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
