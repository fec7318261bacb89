/// A simulated device's coin or bill values in its own terms: the largest scaling factor up to
/// `limit` that divides every value (a changer's factor is one byte, a validator's two), and each
/// value in it by type (0…15). How a simulated device that must take the configured values sets
/// itself up; a real one reports its factor in SETUP.
public struct ScaledValues: Sendable, Equatable {
    public let factor: Int
    /// Indexed by type; 0 for a type with no value.
    public let credits: [UInt8]

    /// `values`: the value of each type, in the currency's smallest unit.
    public init(_ values: [Int: Int64], limit: Int) {
        let whole = max(values.values.map(Int.init).reduce(0, Self.gcd), 1)
        factor = (1...min(whole, limit)).last { whole % $0 == 0 } ?? 1
        var credits = [UInt8](repeating: 0, count: 16)
        for (type, value) in values where (0..<16).contains(type) {
            credits[type] = UInt8(clamping: Int(value) / factor)
        }
        self.credits = credits
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
}
