#if canImport(Glibc)
    import Glibc
#endif

/// Standard error, where systemd's journal and a technician's terminal read; plain write(2), so
/// it needs no Foundation and no buffer that a crash could lose.
public enum StandardError {
    /// Writes `text` as it is (callers end their lines). A failure is dropped: there is nowhere
    /// left to report it.
    public static func write(_ text: String) {
        try? writeAll(text, to: STDERR_FILENO)
    }
}

/// Standard output written straight away, past `print`'s buffer: for output a pipe must see as
/// it happens (`vendctl watch | tee`).
public enum StandardOutput {
    public static func write(_ text: String) {
        try? writeAll(text, to: STDOUT_FILENO)
    }
}

/// Writes all of `text` to `descriptor`, however many write(2) calls that takes.
func writeAll(_ text: String, to descriptor: Int32, path: String? = nil) throws(SystemError) {
    var text = text
    // withUTF8 rethrows untyped errors: the failure is carried out of it as a value.
    let failure = text.withUTF8 { bytes -> SystemError? in
        var offset = 0
        while offset < bytes.count {
            do throws(SystemError) {
                let written = try systemCall("write", path) { Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset) }
                // Nothing written and no error: a device that takes no more.
                guard written > 0 else { return SystemError(call: "write", path: path, errno: EIO) }
                offset += written
            } catch {
                return error
            }
        }
        return nil
    }
    if let failure { throw failure }
}
