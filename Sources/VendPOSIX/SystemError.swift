#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call: which call, on what (a path or a name; nil when there is none to give),
/// and the `errno` it set. The one error type for system calls in vendd.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    public let call: String
    public let path: String?
    public let errno: Int32

    public init(call: String, path: String? = nil, errno: Int32) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    /// `errno` in words, as strerror(3) gives them: "No such file or directory".
    public var reason: String { Self.text(errno) }

    public var description: String {
        if let path { "\(call) \(path): \(reason)" } else { "\(call): \(reason)" }
    }

    /// An `errno` value in words, for messages that are not about one call.
    public static func text(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// Runs a system call, again while a signal interrupts it (`EINTR`); a result of -1 becomes a
/// `SystemError` naming `call` and `path`. Every retried system call in vendd goes through here.
@discardableResult
public func systemCall<Result: BinaryInteger>(
    _ call: String, _ path: String? = nil, _ body: () -> Result
) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code != EINTR { throw SystemError(call: call, path: path, errno: code) }
    }
}
