/// A point in wall-clock time, in milliseconds since the Unix epoch. The core has no clock: every
/// input comes with the instant it happened, so the machine is deterministic and replayable.
public struct Instant: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let millisecondsSinceEpoch: Int64

    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    public static func < (lhs: Instant, rhs: Instant) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }

    public static func + (lhs: Instant, rhs: Duration) -> Instant {
        Instant(millisecondsSinceEpoch: lhs.millisecondsSinceEpoch + rhs.wholeMilliseconds)
    }

    public static func - (lhs: Instant, rhs: Instant) -> Duration {
        .milliseconds(lhs.millisecondsSinceEpoch - rhs.millisecondsSinceEpoch)
    }

    public static let millisecondsPerDay: Int64 = 86_400_000

    /// The instant `days` whole days later.
    public func adding(days: Int) -> Instant {
        Instant(millisecondsSinceEpoch: millisecondsSinceEpoch + Int64(days) * Self.millisecondsPerDay)
    }

    public var description: String { "@\(millisecondsSinceEpoch)ms" }

    public init(from decoder: any Decoder) throws {
        millisecondsSinceEpoch = try decoder.singleValueContainer().decode(Int64.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(millisecondsSinceEpoch)
    }
}

extension Duration {
    /// Whole milliseconds, rounded towards zero.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    public var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
