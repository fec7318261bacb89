import CMicroHTTPDShim

#if canImport(Glibc)
    import Glibc
#endif

/// A request as the office reads it: what libmicrohttpd parsed, the body whole.
public struct OfficeRequest: Sendable {
    public let method: String
    /// Percent-decoded, without the query.
    public let path: String
    /// The headers the office reads (lower-case names): cookie, content-type, x-forwarded-for.
    public let headers: [String: String]
    /// The query arguments the office reads (sort, filter, q, route, id), percent-decoded.
    public let query: [String: String]
    public let body: [UInt8]
    /// The peer's address.
    public let peer: String

    public init(method: String, path: String, headers: [String: String] = [:], query: [String: String] = [:], body: [UInt8] = [], peer: String) {
        self.method = method
        self.path = path
        self.headers = headers
        self.query = query
        self.body = body
        self.peer = peer
    }

    static let readHeaders = ["cookie", "content-type", "x-forwarded-for"]
    static let readArguments = ["sort", "filter", "q", "route", "id"]

    /// The cookie `name`'s value, if the request has one.
    func cookie(_ name: String) -> String? {
        guard let header = headers["cookie"] else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingSpaces == name { return String(parts[1].trimmingSpaces) }
        }
        return nil
    }

    /// An `application/x-www-form-urlencoded` body's fields (the first of a repeated name).
    var form: [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in formFields where fields[name] == nil { fields[name] = value }
        return fields
    }

    /// Every value of a repeated field (checkboxes of one name), in the body's order.
    func formValues(_ name: String) -> [String] {
        formFields.filter { $0.name == name }.compactMap(\.value)
    }

    /// The body's fields in order; a value that does not decode is nil.
    private var formFields: [(name: String, value: String?)] {
        guard headers["content-type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else { return [] }
        return body.split(separator: UInt8(ascii: "&")).compactMap { pair in
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.formDecode(parts[0]) else { return nil }
            return (name, parts.count == 2 ? Self.formDecode(parts[1]) : "")
        }
    }

    /// `+` as space and `%XX` as its byte; nil for a broken escape or bytes that are not UTF-8.
    static func formDecode(_ bytes: ArraySlice<UInt8>) -> String? {
        var decoded: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                decoded.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%") {
                guard bytes.distance(from: index, to: bytes.endIndex) >= 3, let high = hexValue(bytes[index + 1]),
                    let low = hexValue(bytes[index + 2])
                else { return nil }
                decoded.append(high << 4 | low)
                index += 2
            } else {
                decoded.append(byte)
            }
            index += 1
        }
        return String(validating: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// An answer: status, headers, body.
public struct OfficeResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}

/// libmicrohttpd listening with its internal thread: each complete request goes to `handler`
/// on that thread, one at a time. Unchecked: `server` and `context` are set once, and only
/// `stop()` (once, by the owner) uses them after that.
public final class OfficeHTTPServer: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private final class Context: Sendable {
        let handler: @Sendable (OfficeRequest) -> OfficeResponse
        init(_ handler: @escaping @Sendable (OfficeRequest) -> OfficeResponse) { self.handler = handler }
    }

    private let server: OpaquePointer
    private let context: Unmanaged<Context>
    public let port: Int

    /// Bodies above this are answered 413 before the handler sees them.
    public static let maxBody = 64 * 1024

    public init(address: String, port: Int, handler: @escaping @Sendable (OfficeRequest) -> OfficeResponse) throws(Failure) {
        let context = Unmanaged.passRetained(Context(handler))
        var error = [CChar](repeating: 0, count: 256)
        guard
            let server = vhttp_start(
                address, UInt32(port), Self.maxBody, 256, 30,
                { raw, request in
                    guard let raw, let request else { return }
                    let context = Unmanaged<Context>.fromOpaque(raw).takeUnretainedValue()
                    OfficeHTTPServer.answer(request, with: context.handler(OfficeHTTPServer.read(request)))
                }, context.toOpaque(), &error, error.count)
        else {
            context.release()
            throw Failure(description: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        self.server = server
        self.context = context
        self.port = Int(vhttp_port(server))
    }

    /// Stops listening and waits for the thread: no request is handled after it returns.
    public func stop() {
        vhttp_stop(server)
        context.release()
    }

    private static func read(_ request: OpaquePointer) -> OfficeRequest {
        var headers: [String: String] = [:]
        for name in OfficeRequest.readHeaders {
            if let value = vhttp_header(request, name) { headers[name] = String(cString: value) }
        }
        var query: [String: String] = [:]
        for name in OfficeRequest.readArguments {
            if let value = vhttp_argument(request, name) { query[name] = String(cString: value) }
        }
        var length = 0
        let bytes = vhttp_body(request, &length)
        let body = bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
        return OfficeRequest(
            method: String(cString: vhttp_method(request)), path: String(cString: vhttp_path(request)), headers: headers, query: query, body: body,
            peer: String(cString: vhttp_client_address(request)))
    }

    private static func answer(_ request: OpaquePointer, with response: OfficeResponse) {
        let texts = response.headers.flatMap { [$0.0, $0.1] }
        var pointers: [UnsafeMutablePointer<CChar>?] = texts.map { strdup($0) }
        defer { for pointer in pointers { free(pointer) } }
        pointers.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { headers in
                response.body.withUnsafeBytes { body in
                    _ = vhttp_respond(request, UInt32(response.status), headers.baseAddress, headers.count, body.baseAddress, body.count)
                }
            }
        }
    }
}
