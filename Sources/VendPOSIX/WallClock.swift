#if canImport(Glibc)
    import Glibc
#endif

/// The real-time clock (CLOCK_REALTIME), which stamps sales and events: what a technician's
/// calendar says, so it may jump when the board's time is set.
public enum WallClock {
    /// Milliseconds since the Unix epoch.
    public static var milliseconds: Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}
