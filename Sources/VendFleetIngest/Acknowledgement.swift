#if canImport(Glibc)
    import Glibc
#endif

/// The retained `stored` payload: `{"seq": N, "at": "<ISO 8601>"}`, N the highest contiguous
/// sequence of the machine durable in the store.
enum Acknowledgement {
    static func payload(seq: Int64, at milliseconds: Int64) -> [UInt8] {
        Array("{\"seq\":\(seq),\"at\":\"\(iso8601(milliseconds))\"}".utf8)
    }

    /// UTC with milliseconds: 2026-11-27T21:04:05.123Z.
    static func iso8601(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = milliseconds % 1000
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }
}
