/// Decoders for the reply data of the identification commands.
public enum Payload {
    /// ASCII text without terminator (Part 1 §9); trailing pad spaces dropped.
    public static func text(_ data: [UInt8]) -> String {
        var text = String(decoding: data.map { (32...126).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }

    /// Serial number: 3 (or 4) bytes, least significant first (Part 2 §3.12).
    public static func serialNumber(_ data: [UInt8]) -> UInt32? {
        guard (3...4).contains(data.count) else { return nil }
        return data.enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    /// The inhibit masks of `modify inhibit status`: bit 0 of the first byte is coin 1, bit 7 of
    /// the second coin 16; a set bit enables the coin (Part 2 §3.25).
    public static func inhibitMask(enabled positions: some Sequence<Int>) -> [UInt8] {
        var mask: [UInt8] = [0, 0]
        for position in positions where (1...16).contains(position) {
            mask[(position - 1) / 8] |= 1 << UInt8((position - 1) % 8)
        }
        return mask
    }

    /// Positions whose bit is set in an inhibit mask. An empty mask (a short reply) has none:
    /// a closed range `1...0` would trap (found by fuzz-cctalk).
    public static func enabledPositions(_ mask: [UInt8]) -> [Int] {
        (0..<(mask.count * 8)).filter { mask[$0 / 8] & (1 << UInt8($0 % 8)) != 0 }.map { $0 + 1 }
    }

    /// `request polling priority`: `[units][value]` → the longest safe interval in milliseconds;
    /// nil when the device leaves it to its manual (0,0) or uses a hardware poll line (0,255).
    public static func pollingInterval(_ data: [UInt8]) -> Int? {
        guard data.count == 2, data[1] != 0 else { return nil }
        let unitMilliseconds: [UInt8: Int] = [
            1: 1, 2: 10, 3: 1_000, 4: 60_000, 5: 3_600_000, 6: 86_400_000,
            7: 604_800_000, 8: 2_592_000_000, 9: 31_536_000_000,
        ]
        return unitMilliseconds[data[0]].map { $0 * Int(data[1]) }
    }
}

/// A coin identifier `[C][C][V][V][V][I]` (Part 3 Appendix 3): country or `TK` token, value with a
/// letter or dot as the decimal point (`.05`, `2K5`, `M10`, `5m0`), and a mint issue letter.
public struct CoinID: Sendable, Equatable, CustomStringConvertible {
    public let text: String

    public init(_ data: [UInt8]) {
        text = String(decoding: data.map { (32...126).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    /// `......`: nothing programmed at this position.
    public var isEmpty: Bool { text.allSatisfy { $0 == "." } }

    public var description: String { isEmpty ? "(empty)" : text }

    /// The value as `mantissa × 10^exponent`, or nil for tokens and codes that do not parse.
    public var value: (mantissa: Int, exponent: Int)? {
        let characters = Array(text)
        guard characters.count == 6 else { return nil }
        let field = characters[2...4]
        var digits = 0, mantissa = 0, pointIndex: Int?, multiplier = 0
        for (index, character) in field.enumerated() {
            if let digit = character.wholeNumberValue {
                mantissa = mantissa * 10 + digit
                digits += 1
            } else if pointIndex == nil, let power = Self.decimalMarkers[character] {
                pointIndex = index
                multiplier = power
            } else {
                return nil
            }
        }
        guard digits > 0 else { return nil }
        // Digits after the marker are fractional.
        let fractional = pointIndex.map { 2 - $0 } ?? 0
        return (mantissa, multiplier - fractional)
    }

    /// Whether the coin is worth `minorUnits`: the value field counts the country's base unit
    /// (pence in GB200A, cents in EU050A, won in KR500A). nil when it has no value (a token).
    public func hasValue(minorUnits: Int64) -> Bool? {
        guard !text.hasPrefix("TK"), let (mantissa, exponent) = value else { return nil }
        // mantissa × 10^exponent == minorUnits, in integers.
        var left = Int64(mantissa), right = minorUnits
        for _ in 0..<abs(exponent) {
            if exponent > 0 { left *= 10 } else { right *= 10 }
        }
        return left == right
    }

    private static let decimalMarkers: [Character: Int] = [
        ".": 0, "m": -3, "K": 3, "M": 6, "G": 9,
    ]
}
