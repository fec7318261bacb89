/// PostgreSQL array literals (`{"a","b"}`, `{1,2}`): a whole batch goes to the server as one
/// parameter per column, unnested there, so a batch is one statement, not one per row.
enum PostgresArray {
    /// nil elements are SQL NULLs.
    static func text(_ values: [String?]) -> String {
        var literal = "{"
        for (index, element) in values.enumerated() {
            if index > 0 { literal += "," }
            guard let value = element else {
                literal += "NULL"
                continue
            }
            literal += "\""
            for character in value.unicodeScalars {
                if character == "\"" || character == "\\" { literal += "\\" }
                literal.unicodeScalars.append(character)
            }
            literal += "\""
        }
        return literal + "}"
    }

    static func integers(_ values: [Int64?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }
}
