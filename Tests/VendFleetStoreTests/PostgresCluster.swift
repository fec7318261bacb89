import Foundation
import Synchronization
import VenddTestSupport

/// A real PostgreSQL for the tests: initdb in a temporary directory, its own port on 127.0.0.1
/// and its socket in that directory, no system service. One cluster serves the whole test run
/// (each test gets a database of its own) and is stopped when the run exits.
final class PostgresCluster: Sendable {
    let directory: String
    let port: Int
    private let counter = Mutex(0)

    private static let shared = Mutex<Result<PostgresCluster, ChildProcessError>?>(nil)

    /// The run's cluster, started on first use.
    static func running() throws -> PostgresCluster {
        try shared.withLock { cluster in
            if cluster == nil {
                cluster = Result { () throws(ChildProcessError) -> PostgresCluster in try PostgresCluster() }
                atexit {
                    PostgresCluster.shared.withLock { cluster in
                        guard let running = try? cluster?.get() else { return }
                        running.stop()
                        running.remove()
                    }
                }
            }
            return try cluster!.get()
        }
    }

    /// A cluster of one's own (a test that stops its server); `running()` is the run's shared one.
    init() throws(ChildProcessError) {
        guard let bin = Self.binaries() else {
            throw ChildProcessError(description: "PostgreSQL's server is not installed (apt-get install postgresql; scripts/test installs it)")
        }
        directory = NSTemporaryDirectory() + "vendstore-pg-\(UUID().uuidString.prefix(8))"
        do { port = try LocalPort.reserve() } catch { throw ChildProcessError(description: error.description) }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.giveToServerUser(directory)
        let initdb = Self.asServerUser(
            bin + "/initdb", ["-D", directory + "/data", "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"], log: directory + "/initdb.log",
            seconds: 60)
        guard initdb == 0 else {
            throw ChildProcessError(
                description: "initdb failed (\(initdb.map { "status \($0)" } ?? "timed out")): \(Self.read(directory + "/initdb.log"))")
        }
        try start()
    }

    /// Starts the server on the cluster's port (again, after `stop()` or `crash()`).
    func start() throws(ChildProcessError) {
        // fsync off: these tests check the store's logic, not the disk; the benchmark keeps it on.
        // pg_ctl is waited for by its pid, never by its output: the server it leaves running
        // would hold a pipe open for ever (Foundation's Process hung the whole run on it).
        let start = Self.asServerUser(
            Self.binaries()! + "/pg_ctl",
            [
                "-D", directory + "/data", "-l", directory + "/postgres.log", "-w", "-t", "30", "-o",
                "-c listen_addresses=127.0.0.1 -p \(port) -k \(directory) -c fsync=off -c max_connections=50", "start",
            ], log: directory + "/pg_ctl.log", seconds: 45)
        guard start == 0 else {
            throw ChildProcessError(
                description:
                    "PostgreSQL did not start (\(start.map { "status \($0)" } ?? "timed out")): \(Self.read(directory + "/pg_ctl.log")) \(Self.read(directory + "/postgres.log"))"
            )
        }
    }

    private static func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// Runs a server tool to its end, at most `seconds`: its wait status, nil if it was killed.
    /// PostgreSQL refuses to run as root (a container's test run is root): then the tools run as
    /// Debian's `postgres` user, which owns the directory.
    private static func asServerUser(_ tool: String, _ arguments: [String], log: String, seconds: Double) -> Int32? {
        let (path, argv) = getuid() == 0 ? ("/usr/sbin/runuser", ["-u", "postgres", "--", tool] + arguments) : (tool, arguments)
        guard let process = try? ChildProcess(path, argv, output: log, errors: log) else { return nil }
        guard let status = process.wait(seconds: seconds) else {
            process.stop(SIGKILL)
            return nil
        }
        return status
    }

    private static func giveToServerUser(_ directory: String) throws(ChildProcessError) {
        guard getuid() == 0 else { return }
        guard let user = getpwnam("postgres") else {
            throw ChildProcessError(
                description:
                    "the tests run as root, which PostgreSQL's server refuses, and there is no 'postgres' user to run it as (Debian's postgresql package creates it): run the tests as another user, or create it"
            )
        }
        chown(directory, user.pointee.pw_uid, user.pointee.pw_gid)
    }

    static func binaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        return versions.last.map { "\(root)/\($0)/bin" }
    }

    func conninfo(database: String = "postgres") -> String {
        "host=127.0.0.1 port=\(port) user=postgres dbname=\(database) connect_timeout=5"
    }

    /// A new empty database.
    func createDatabase() throws -> String {
        let number = counter.withLock { count in
            count += 1
            return count
        }
        let name = "t\(number)_\(getpid())"
        try psql("CREATE DATABASE \(name)")
        return conninfo(database: name)
    }

    @discardableResult
    func psql(_ sql: String, database: String = "postgres") throws -> String {
        let run = try ProcessRun.run(
            Self.binaries()! + "/psql", [conninfo(database: database), "-XAtq", "-c", sql])
        guard run.status == 0 else { throw ChildProcessError(description: "psql \(sql): \(run.errors)") }
        return run.output
    }

    /// Stops the server (fast shutdown, as a restart by its operator).
    func stop() { stop(mode: "fast") }

    /// Stops the server as a crash would: `pg_ctl -m immediate` has every server process quit at
    /// once, without a checkpoint; the next start recovers from the WAL. (A SIGKILLed postmaster
    /// would leave its pid, and its lock file, to a parent that may not reap it.)
    func crash() { stop(mode: "immediate") }

    private func stop(mode: String) {
        _ = Self.asServerUser(
            Self.binaries()! + "/pg_ctl", ["-D", directory + "/data", "-m", mode, "-w", "-t", "20", "stop"], log: directory + "/pg_ctl.log",
            seconds: 30)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
