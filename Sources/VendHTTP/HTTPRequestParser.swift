/// Reads HTTP/1.x requests (RFC 9112) from the bytes a connection received, strictly: what is not
/// a well-formed request of a size the limits allow is refused with the status to answer, and the
/// server then closes the connection. Pure: no I/O, no clock.
///
/// Accepted framing: a body announced by `Content-Length` (at most `maximumBody` bytes), or none.
/// `Transfer-Encoding` is refused (411: the kiosk's requests carry no body worth chunking), and so
/// are obsolete line folding, whitespace before a field's colon, control characters in a field,
/// an HTTP/1.1 request without exactly one `Host`, and conflicting `Content-Length`s — the
/// ambiguities request smuggling lives on. A bare LF ends a line as CRLF does (RFC 9112 §2.2);
/// a bare CR is refused.
public struct HTTPRequestParser: Sendable {
    public struct Limits: Sendable {
        /// The request line, without its line end (longer: 414).
        public var requestLine = 2_048
        /// The header section, every field line with its line end (longer: 431).
        public var headerBytes = 8_192
        /// Field lines (more: 431).
        public var headerFields = 64
        /// The body (longer: 413, refused before it is read).
        public var body = 1_024

        public init() {}
    }

    public enum Outcome: Sendable, Equatable {
        /// More bytes are needed.
        case incomplete
        /// A request, taking the first `consumed` bytes of the buffer.
        case request(HTTPRequest, consumed: Int)
        /// Not a request that will be served: answer `status` (with `reason` as its text) and close.
        case invalid(HTTPStatus, reason: String)
    }

    public let limits: Limits

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The first request in `buffer`, if it is all there.
    public func parse(_ buffer: ArraySlice<UInt8>) -> Outcome {
        var position = buffer.startIndex
        // At most a few empty lines before a request are ignored (RFC 9112 §2.2).
        var emptyLines = 0
        while position < buffer.endIndex, buffer[position] == .cr || buffer[position] == .lf {
            if buffer[position] == .lf { emptyLines += 1 }
            guard emptyLines <= 4 else { return .invalid(.badRequest, reason: "empty lines instead of a request") }
            position += 1
        }
        // The request line.
        let requestLine: ArraySlice<UInt8>
        switch nextLine(buffer, from: position, limit: limits.requestLine) {
        case .incomplete: return .incomplete
        case .tooLong: return .invalid(.uriTooLong, reason: "request line longer than \(limits.requestLine) bytes")
        case .bareCR: return .invalid(.badRequest, reason: "a CR without LF in the request line")
        case .line(let line, let next):
            requestLine = line
            position = next
        }
        let start: RequestLine
        switch RequestLine.parse(requestLine) {
        case .failure(let refusal): return .invalid(refusal.status, reason: refusal.reason)
        case .success(let line): start = line
        }
        // The header section.
        var headers: [(name: String, value: String)] = []
        let headerStart = position
        while true {
            let room = limits.headerBytes - (position - headerStart)
            switch nextLine(buffer, from: position, limit: room) {
            case .incomplete: return .incomplete
            case .tooLong: return .invalid(.requestHeaderFieldsTooLarge, reason: "header section longer than \(limits.headerBytes) bytes")
            case .bareCR: return .invalid(.badRequest, reason: "a CR without LF in the header section")
            case .line(let line, let next):
                position = next
                if line.isEmpty {
                    return finish(start, headers: headers, buffer: buffer, bodyStart: position)
                }
                guard headers.count < limits.headerFields else {
                    return .invalid(.requestHeaderFieldsTooLarge, reason: "more than \(limits.headerFields) header fields")
                }
                switch Self.field(line) {
                case .failure(let refusal): return .invalid(refusal.status, reason: refusal.reason)
                case .success(let field): headers.append(field)
                }
            }
        }
    }

    private func finish(_ start: RequestLine, headers: [(name: String, value: String)], buffer: ArraySlice<UInt8>, bodyStart: Int) -> Outcome {
        if start.minorVersion >= 1, headers.filter({ $0.name == "host" }).count != 1 {
            return .invalid(.badRequest, reason: "an HTTP/1.1 request needs exactly one Host field")
        }
        if headers.contains(where: { $0.name == "transfer-encoding" }) {
            if headers.contains(where: { $0.name == "content-length" }) {
                return .invalid(.badRequest, reason: "both Transfer-Encoding and Content-Length")
            }
            return .invalid(.lengthRequired, reason: "Transfer-Encoding is not accepted; send a Content-Length")
        }
        let lengths = Set(headers.filter { $0.name == "content-length" }.map(\.value))
        var length = 0
        if let text = lengths.first {
            guard lengths.count == 1, !text.isEmpty, text.utf8.allSatisfy({ $0 >= .zero && $0 <= .nine }) else {
                return .invalid(.badRequest, reason: "Content-Length is not one decimal number")
            }
            guard text.utf8.count <= 9, let value = Int(text), value <= limits.body else {
                return .invalid(.contentTooLarge, reason: "a body of \(text) bytes; at most \(limits.body) are accepted")
            }
            length = value
        }
        guard buffer.endIndex - bodyStart >= length else { return .incomplete }
        let request = HTTPRequest(
            method: start.method, target: start.target, path: start.path, segments: start.segments, query: start.query,
            minorVersion: start.minorVersion, headers: headers, body: Array(buffer[bodyStart..<bodyStart + length]))
        return .request(request, consumed: bodyStart + length - buffer.startIndex)
    }

    // MARK: Lines

    private enum Line {
        case incomplete
        case tooLong
        case bareCR
        /// The line without its end, and where the next one starts.
        case line(ArraySlice<UInt8>, next: Int)
    }

    /// The line starting at `start`, ended by LF or CRLF; longer than `limit` without its end: too long.
    private func nextLine(_ buffer: ArraySlice<UInt8>, from start: Int, limit: Int) -> Line {
        let window = buffer[start..<min(buffer.endIndex, start + max(0, limit) + 2)]
        guard let lf = window.firstIndex(of: .lf) else {
            if window.count > limit + 1 || (window.count == limit + 1 && window.last != .cr) { return .tooLong }
            return window.dropLast().contains(.cr) ? .bareCR : .incomplete
        }
        var end = lf
        if end > start, buffer[end - 1] == .cr { end -= 1 }
        if buffer[start..<end].contains(.cr) { return .bareCR }
        guard end - start <= limit else { return .tooLong }
        return .line(buffer[start..<end], next: lf + 1)
    }

    // MARK: Fields

    struct Refusal: Error {
        let status: HTTPStatus
        let reason: String
    }

    /// `name: value` with the value's surrounding spaces and tabs dropped.
    static func field(_ line: ArraySlice<UInt8>) -> Result<(name: String, value: String), Refusal> {
        guard line.first != .space, line.first != .tab else {
            return .failure(Refusal(status: .badRequest, reason: "obsolete line folding in the header section"))
        }
        guard let colon = line.firstIndex(of: .colon) else {
            return .failure(Refusal(status: .badRequest, reason: "a header line without a colon"))
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(\.isTokenCharacter) else {
            return .failure(Refusal(status: .badRequest, reason: "a header field name that is not a token"))
        }
        var value = line[(colon + 1)...]
        while let first = value.first, first == .space || first == .tab { value = value.dropFirst() }
        while let last = value.last, last == .space || last == .tab { value = value.dropLast() }
        guard value.allSatisfy({ $0 == .tab || ($0 >= .space && $0 != 0x7F) }) else {
            return .failure(Refusal(status: .badRequest, reason: "a control character in a header field's value"))
        }
        return .success((String(decoding: name, as: UTF8.self).lowercased(), String(decoding: value, as: UTF8.self)))
    }
}

/// `METHOD SP request-target SP HTTP/x.y`.
struct RequestLine {
    let method: String
    let target: String
    let path: String
    let segments: [String]
    let query: String?
    let minorVersion: Int

    static func parse(_ line: ArraySlice<UInt8>) -> Result<RequestLine, HTTPRequestParser.Refusal> {
        func refuse(_ status: HTTPStatus, _ reason: String) -> Result<RequestLine, HTTPRequestParser.Refusal> {
            .failure(HTTPRequestParser.Refusal(status: status, reason: reason))
        }
        let parts = line.split(separator: .space, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return refuse(.badRequest, "not a request line (METHOD /path HTTP/1.1)") }
        let (method, target, version) = (parts[0], parts[1], parts[2])
        guard !method.isEmpty, method.allSatisfy(\.isTokenCharacter) else { return refuse(.badRequest, "the method is not a token") }
        let versionBytes = Array(version)
        guard versionBytes.count == 8, versionBytes.starts(with: Array("HTTP/".utf8)), versionBytes[6] == .dot,
            versionBytes[5].isDigit, versionBytes[7].isDigit
        else { return refuse(.badRequest, "not an HTTP version") }
        guard versionBytes[5] == .one else { return refuse(.httpVersionNotSupported, "only HTTP/1.0 and HTTP/1.1 are served") }
        guard target.first == .slash, target.allSatisfy({ $0 > .space && $0 < 0x7F }) else {
            return refuse(.badRequest, "the request target is not a path")
        }
        let question = target.firstIndex(of: .question)
        let rawPath = target[target.startIndex..<(question ?? target.endIndex)]
        var segments: [String] = []
        if rawPath.count > 1 {
            for raw in rawPath.dropFirst().split(separator: .slash, omittingEmptySubsequences: false) {
                guard let segment = percentDecoded(raw) else { return refuse(.badRequest, "a bad percent-encoding in the path") }
                segments.append(segment)
            }
        }
        return .success(
            RequestLine(
                method: String(decoding: method, as: UTF8.self), target: String(decoding: target, as: UTF8.self),
                path: "/" + segments.joined(separator: "/"), segments: segments,
                query: question.map { String(decoding: target[($0 + 1)...], as: UTF8.self) },
                minorVersion: Int(versionBytes[7] - .zero)))
    }

    /// `%XX` decoded; nil for a malformed escape, a NUL, or bytes that are not UTF-8.
    static func percentDecoded(_ raw: ArraySlice<UInt8>) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index < raw.endIndex {
            if raw[index] == .percent {
                guard index + 2 < raw.endIndex, let high = raw[index + 1].hexValue, let low = raw[index + 2].hexValue else { return nil }
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(raw[index])
                index += 1
            }
        }
        guard !bytes.contains(0) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}

extension UInt8 {
    static let tab = UInt8(ascii: "\t")
    static let lf = UInt8(ascii: "\n")
    static let cr = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let colon = UInt8(ascii: ":")
    static let slash = UInt8(ascii: "/")
    static let question = UInt8(ascii: "?")
    static let percent = UInt8(ascii: "%")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let one = UInt8(ascii: "1")
    static let nine = UInt8(ascii: "9")

    var isDigit: Bool { self >= .zero && self <= .nine }

    /// RFC 9110's tchar: what a method or a field name is made of.
    var isTokenCharacter: Bool {
        switch self {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), .zero ... .nine: true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(self)
        }
    }

    var hexValue: UInt8? {
        switch self {
        case .zero ... .nine: self - .zero
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
