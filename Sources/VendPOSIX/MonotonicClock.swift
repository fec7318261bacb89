#if canImport(Glibc)
    import Glibc
#endif

/// The monotonic clock as vendd needs it: Swift's `ContinuousClock` for deadlines, and the
/// kernel's CLOCK_MONOTONIC in nanoseconds, which stamps GPIO edges, counts systemd's
/// MONOTONIC_USEC, and feeds the pure receivers (they take time as a number so tests can drive it).
public enum MonotonicClock {
    public static var now: ContinuousClock.Instant { ContinuousClock.now }

    /// CLOCK_MONOTONIC: nanoseconds since boot, not counting suspend.
    public static var nanoseconds: UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The `ContinuousClock` instant of a CLOCK_MONOTONIC stamp. The two clocks differ (suspend
    /// time), so the stamp's age is carried across: exact however late the stamp is read.
    public static func instant(ofNanoseconds stamp: UInt64) -> ContinuousClock.Instant {
        let age = Int64(clamping: nanoseconds) - Int64(clamping: stamp)
        return now - .nanoseconds(max(0, age))
    }
}
