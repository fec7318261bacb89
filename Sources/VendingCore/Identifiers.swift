/// A string identifier with a phantom tag, so a slot id can never be passed where a product id
/// is expected. Identifiers sort by their text.
public struct Identifier<Tag>: RawRepresentable, Hashable, Comparable, Sendable, Codable,
    ExpressibleByStringLiteral, CustomStringConvertible
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension Identifier: CodingKeyRepresentable {
    /// Lets dictionaries keyed by identifiers encode as objects (`{"A1": …}`), not as arrays.
    public var codingKey: any CodingKey { AnyCodingKey(rawValue) }
    public init?<Key: CodingKey>(codingKey: Key) { self.init(rawValue: codingKey.stringValue) }
}

struct AnyCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int? = nil
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

public enum SlotTag {}
public enum ProductTag {}

/// A slot's label as printed on the machine, e.g. "A1".
public typealias SlotID = Identifier<SlotTag>
/// A product's identifier in the catalog, e.g. "cola".
public typealias ProductID = Identifier<ProductTag>

/// Numbers vends in the order they start; never reused, also across restarts.
public struct VendID: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "vend#\(rawValue)" }
    public static func < (lhs: VendID, rhs: VendID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt64.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Identifies one coin event at its source so that it is credited exactly once.
///
/// `source` names the device that reported it (for ccTalk, including the acceptor's serial
/// number); `sequence` increases by at least one with every event from that source, across
/// restarts. Drivers map their device's own counter onto it (a ccTalk acceptor's 1…255 counter
/// becomes `laps × 255 + counter`) and continue from `Machine.lastCoinSequence(from:)`.
public struct CoinEventID: Hashable, Sendable, Codable, CustomStringConvertible {
    public let source: String
    public let sequence: UInt64
    public init(source: String, sequence: UInt64) {
        self.source = source
        self.sequence = sequence
    }
    public var description: String { "\(source)#\(sequence)" }
}
