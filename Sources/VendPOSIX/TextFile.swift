#if canImport(Glibc)
    import Glibc
#endif

/// Files a technician asked for (a report, an audit), written whole or not at all: into a
/// temporary file beside `path`, then renamed over it, so a reader never sees half a file.
public enum TextFile {
    public static func write(_ text: String, to path: String) throws(SystemError) {
        let temporary = "\(path).tmp\(getpid())"
        let descriptor = try systemCall("open", temporary) { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666) }
        do {
            try writeAll(text, to: descriptor, path: temporary)
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        // Not retried on EINTR: Linux has closed the descriptor whatever close(2) returns.
        if close(descriptor) != 0 {
            let error = SystemError(call: "close", path: temporary, errno: errno)
            unlink(temporary)
            throw error
        }
        do {
            try systemCall("rename", path) { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw error
        }
    }
}
