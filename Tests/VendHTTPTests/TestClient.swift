#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TCP client on loopback, as a browser or a hostile program would use the server.
final class TestClient {
    let descriptor: Int32
    private(set) var buffer: [UInt8] = []

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `receiveBuffer`: a small one, set before connecting, makes the kernel hold little for a
    /// client that does not read.
    init(port: Int, ipv6: Bool = false, timeout: Duration = .seconds(5), receiveBuffer: Int32? = nil) throws {
        descriptor = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(errno)") }
        if var size = receiveBuffer { setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        let connected: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, "::1", &address.sin6_addr)
            connected = withUnsafePointer(to: address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
            connected = withUnsafePointer(to: address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw Failure(description: "connect: \(errno)")
        }
        setTimeout(timeout)
    }

    deinit { close(descriptor) }

    func setTimeout(_ timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send: \(errno)") }
            offset += sent
        }
    }

    /// Reads once into the buffer; false at the end of the stream, on a reset or on the timeout.
    @discardableResult
    func receive() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer += chunk[..<count]
        return true
    }

    /// Whether the server closed the connection: the end of the stream (or a reset) before the timeout.
    func closedByServer() -> Bool {
        while true {
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[..<count]
                continue
            }
            return count == 0 || errno == ECONNRESET
        }
    }

    /// Without waiting: nothing has come, and the connection is open.
    func isSilent() -> Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK)) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    /// Without waiting: the server has closed the connection (its end of stream, or a reset).
    func isClosedNow() -> Bool {
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }

    struct Response {
        let status: Int
        /// Names lowercased.
        let headers: [String: String]
        let body: String
    }

    /// The next whole response (its body as Content-Length says; none for HEAD or 204).
    func response(head: Bool = false) throws -> Response {
        while true {
            if let end = headEnd() {
                let lines = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
                let status = Int(lines[0].split(separator: " ")[1]) ?? 0
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...].drop { $0 == " " })
                }
                let length = head || status == 204 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
                while buffer.count < end + 4 + length {
                    guard receive() else { throw Failure(description: "the body ended early") }
                }
                let body = String(decoding: buffer[(end + 4)..<(end + 4 + length)], as: UTF8.self)
                buffer.removeFirst(end + 4 + length)
                return Response(status: status, headers: headers, body: body)
            }
            guard receive() else { throw Failure(description: "no response; got \(String(decoding: buffer, as: UTF8.self))") }
        }
    }

    /// Reads until the buffer holds `text`; false if the stream ends or times out first.
    func receive(until text: String) -> Bool {
        let needle = Array(text.utf8)
        var searched = 0
        while true {
            // Only what came since the last look (and the needle's length before it) is searched.
            let from = max(0, searched - needle.count)
            if buffer.count >= needle.count, buffer[from...].firstRange(of: needle) != nil { return true }
            searched = buffer.count
            guard receive() else { return false }
        }
    }

    var text: String { String(decoding: buffer, as: UTF8.self) }

    /// How many times `text` occurs in what was received.
    func occurrences(of text: String) -> Int {
        let needle = Array(text.utf8)
        var count = 0
        var rest = buffer[...]
        while let range = rest.firstRange(of: needle) {
            count += 1
            rest = rest[range.upperBound...]
        }
        return count
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10
        {
            return index
        }
        return nil
    }
}

extension String {
    func components(separatedBy separator: String) -> [String] {
        var parts: [String] = []
        var rest = self[...]
        while let range = rest.firstRange(of: separator) {
            parts.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        parts.append(String(rest))
        return parts
    }
}

/// Waits up to `limit` for `condition`, polling.
func eventually(within limit: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
