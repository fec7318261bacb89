import VendHTTP

/// What the office reads of a request, beyond its method, path and body.
enum OfficeRequest {
    static let headers = ["cookie", "content-type", "x-forwarded-for"]
    static let arguments = ["sort", "filter", "q", "route", "id", "seq", "request"]
}

extension HTTPRequest {
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

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
