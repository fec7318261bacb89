#if canImport(Glibc)
    import Glibc
#endif

/// Standard error, where systemd's journal and a technician's terminal read; plain write(2), so
/// it needs no Foundation and no buffer that a crash could lose.
public enum StandardError {
    /// Writes `text` as it is (callers end their lines). A failure is dropped: there is nowhere
    /// left to report it.
    public static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                guard
                    let written = try? systemCall(
                        "write", nil,
                        {
                            Glibc.write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                        }), written > 0
                else { return }
                offset += written
            }
        }
    }
}
