/// What a handheld checks of an audit file it read before it keeps it (EVA-DTS 6.1.1 data
/// dictionary): the transaction set's G85 CRC-16 over the segments from ST up to G85, and SE01,
/// the number of segments from ST to SE. With the handheld's own CRC, not VendDEX's.
public enum AuditCheck {
    /// What is wrong with `text`; empty when the file checks.
    public static func problems(_ text: String) -> [String] {
        guard text.hasSuffix("\r\n") else { return ["the file does not end in CR LF"] }
        let segments = text.dropLast(2).components(separatedBy: "\r\n")
        guard let start = segments.firstIndex(where: { $0.hasPrefix("ST*") }) else { return ["no ST segment"] }
        guard let g85 = segments.firstIndex(where: { $0.hasPrefix("G85*") }), g85 > start else { return ["no G85 segment after ST"] }
        guard let end = segments.firstIndex(where: { $0.hasPrefix("SE*") }), end > g85 else { return ["no SE segment after G85"] }
        var problems: [String] = []
        let checked = segments[start..<g85].map { $0 + "\r\n" }.joined()
        let crc = String(Wire.crc(Array(checked.utf8)), radix: 16, uppercase: true)
        let want = String(repeating: "0", count: 4 - crc.count) + crc
        if segments[g85] != "G85*" + want { problems.append("\(segments[g85]), the segments from ST give \(want)") }
        let count = segments[end].split(separator: "*").dropFirst().first.flatMap { Int($0) }
        if count != end - start + 1 {
            problems.append("\(segments[end]) counts \(count.map(String.init) ?? "nothing"), ST to SE are \(end - start + 1)")
        }
        return problems
    }

    /// The first segment (counted from 0) where `got` is not the report `want`, nil when it is.
    /// The same report made at another moment for another reader differs only in EA3's "this
    /// interrogation" (EA302 date, EA303 time, EA304 terminal, data dictionary p.232) and so in
    /// G85, which `problems` checks on its own.
    public static func firstDifference(_ got: String, from want: String) -> Int? {
        let mine = got.components(separatedBy: "\r\n"), theirs = want.components(separatedBy: "\r\n")
        func same(_ left: String, _ right: String) -> Bool {
            if left.hasPrefix("G85*") && right.hasPrefix("G85*") { return true }
            guard left.hasPrefix("EA3*") && right.hasPrefix("EA3*") else { return left == right }
            func rest(_ segment: String) -> [Substring] {
                let elements = segment.split(separator: "*", omittingEmptySubsequences: false)
                return Array(elements.prefix(2)) + Array(elements.dropFirst(5))
            }
            return rest(left) == rest(right)
        }
        if let index = zip(mine, theirs).enumerated().first(where: { !same($0.element.0, $0.element.1) })?.offset { return index }
        return mine.count == theirs.count ? nil : min(mine.count, theirs.count)
    }

    /// The segment starting `tag*`, if any.
    public static func segment(_ tag: String, in text: String) -> String? {
        text.components(separatedBy: "\r\n").first { $0.hasPrefix(tag + "*") }
    }
}
