#if canImport(Glibc)
    import Glibc
#endif

/// Whole small files: a report or an audit a technician asked for, a simulated device's memory,
/// written whole or not at all (into a temporary file beside `path`, then renamed over it, so a
/// reader, or a restart after `kill -9`, never sees half a file); and sysfs attributes read in
/// one go. The machine's books go through the journal, not here.
public enum TextFile {
    /// `durable`: the file is fsync'd before the rename and its directory after it, so a power
    /// cut too leaves the old file or the new one (a simulated device's memory, which a restart
    /// reads back); a report needs no more than `kill -9` does.
    public static func write(_ text: String, to path: String, durable: Bool = false) throws(SystemError) {
        let temporary = "\(path).tmp\(getpid())"
        let descriptor = try systemCall("open", temporary) { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666) }
        do {
            try writeAll(text, to: descriptor, path: temporary)
            if durable { try systemCall("fsync", temporary) { fsync(descriptor) } }
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
        if durable { try syncDirectory(of: path) }
    }

    /// The rename into `path` made durable: its directory fsync'd.
    private static func syncDirectory(of path: String) throws(SystemError) {
        let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let descriptor = try systemCall("open", directory) { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(descriptor) }
        try systemCall("fsync", directory) { fsync(descriptor) }
    }

    /// The first `limit` bytes of `path` as UTF-8 text (invalid bytes repaired). For sysfs
    /// attributes (a sensor's `w1_slave`, `temp1_input`), which the kernel renders on each read.
    public static func read(_ path: String, limit: Int = 4_096) throws(SystemError) -> String {
        let descriptor = try systemCall("open", path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: limit)
        // withUnsafeMutableBytes rethrows untyped errors: the outcome is carried out as a value.
        let outcome = bytes.withUnsafeMutableBytes { buffer -> Result<Int, SystemError> in
            var count = 0
            while count < limit {
                do throws(SystemError) {
                    let got = try systemCall("read", path) { Glibc.read(descriptor, buffer.baseAddress! + count, limit - count) }
                    if got == 0 { break }
                    count += got
                } catch {
                    return .failure(error)
                }
            }
            return .success(count)
        }
        let count = try outcome.get()
        return String(decoding: bytes[..<count], as: UTF8.self)
    }
}
