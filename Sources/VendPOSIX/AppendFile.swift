#if canImport(Glibc)
    import Glibc
#endif

/// A text file that lines are added to at its end (created if missing), each addition written
/// whole with `write(2)` on an `O_APPEND` descriptor, never buffered: what a reader of the file
/// sees is what was appended. Closed when released.
public final class AppendFile: Sendable {
    public let path: String
    private let descriptor: Int32

    public init(_ path: String) throws(SystemError) {
        self.path = path
        descriptor = try systemCall("open", path) { open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644) }
    }

    // Not retried on EINTR: Linux has released the descriptor whatever close(2) returns.
    deinit { close(descriptor) }

    public func append(_ text: String) throws(SystemError) {
        try writeAll(text, to: descriptor, path: path)
    }
}
