import Foundation

/// A child process started with an empty signal mask and default signal dispositions. Foundation's
/// `Process` passes on the test runner's mask, in which SIGTERM is blocked: a broker started that
/// way cannot be stopped cleanly (and so cannot save its sessions as a real restart does).
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: one test drives it; `exited` is only touched by its methods.
    public let pid: pid_t
    private var exited = false

    public init(_ path: String, _ arguments: [String], output: String, errors: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        // Nothing else of the test process: a daemon started through the child (pg_ctl's
        // postgres) would otherwise keep another test's pipes and Foundation's exit-watch
        // sockets open, and that test would wait for their end forever.
        // (glibc >= 2.34; looked up at run time, since Swift's Glibc module does not show it.)
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGTERM, SIGINT, SIGPIPE] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard status == 0 else { throw ChildProcessError(description: "cannot start \(path): \(String(cString: strerror(status)))") }
        self.pid = pid
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }

    public var isRunning: Bool {
        guard !exited else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exited = true }
        return !exited
    }

    /// SIGTERM (or `signal`), then waits for the exit, at most `seconds`: then SIGKILL. False if
    /// it had to be killed (it did not end on `signal` in time).
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM, within seconds: Double = 20) -> Bool {
        guard isRunning else { return true }
        kill(pid, signal)
        if wait(seconds: seconds) != nil { return true }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        exited = true
        return false
    }

    /// Waits at most `seconds` for the exit: its wait status, or nil if it is still running.
    public func wait(seconds: Double) -> Int32? {
        guard !exited else { return nil }
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                exited = true
                return status
            }
            if result < 0, errno != EINTR {
                exited = true
                return nil
            }
            guard Date() < deadline else { return nil }
            usleep(5_000)
        }
    }
}

extension ChildProcess {
    /// Waits until something accepts connections on 127.0.0.1:`port`, as a server this process
    /// runs does once it listens; false if the process ends first or `seconds` pass.
    public func waitUntilListening(on port: Int, within seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !LocalPort.accepts(port) {
            guard isRunning, Date() < deadline else { return false }
            usleep(20_000)
        }
        return true
    }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}
