/// The monotonic clock as the drivers need it: Swift's `ContinuousClock` for deadlines, and
/// plain nanoseconds for the pure receivers (which take time as a number so tests can drive it).
public enum MonotonicClock {
    public static var now: ContinuousClock.Instant { ContinuousClock.now }

    /// Nanoseconds since the first use in this process.
    public static var nanoseconds: UInt64 {
        let (seconds, attoseconds) = origin.duration(to: ContinuousClock.now).components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    private static let origin = ContinuousClock.now
}
