/// PostgreSQL array literals (`{"a","b"}`, `{1,2}`): a whole batch goes to the server as one
/// parameter per column, unnested there, so a batch is one statement, not one per row.
enum PostgresArray {
    /// nil elements are SQL NULLs. Built on UTF-8 bytes: a quote or backslash byte is never part
    /// of a multi-byte character, and a batch's payloads make this the commit's costliest step.
    static func text(_ values: [String?]) -> String {
        var literal: [UInt8] = [UInt8(ascii: "{")]
        literal.reserveCapacity(values.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, element) in values.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            guard let value = element else {
                literal += "NULL".utf8
                continue
            }
            literal.append(quote)
            for byte in value.utf8 {
                if byte == quote || byte == backslash { literal.append(backslash) }
                literal.append(byte)
            }
            literal.append(quote)
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }

    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    static func integers(_ values: [Int64?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }
}
