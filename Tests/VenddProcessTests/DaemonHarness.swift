import Foundation
import VendControl
import VenddTestSupport

/// A real `vendd run --simulate` in a temporary directory, with a shipped configuration: by
/// default the ccTalk machine (config/examples/cctalk-coins.yaml), whose coins answer at once.
final class DaemonHarness: @unchecked Sendable {
    // @unchecked: used from one test at a time; the process handle is only touched by its methods.
    let directory: TemporaryDirectory
    let configPath: String
    var stateDirectory: String { directory.path + "/state" }
    var socketPath: String { directory.path + "/control.sock" }
    var logPath: String { directory.path + "/vendd-\(runs).log" }
    private(set) var process: Process?
    private(set) var runs = 0

    /// The shipped sample: MDB coins, notes and cards, run in-process, and change.
    static let sampleMachine = "config/vendd.yaml"

    /// `edit` may change the configuration's text before it is written.
    init(config: String = "config/examples/cctalk-coins.yaml", edit: (String) -> String = { $0 }) throws {
        directory = try TemporaryDirectory()
        let sample = try String(contentsOf: repositoryRoot.appendingPathComponent(config), encoding: .utf8)
        configPath = directory.path + "/vendd.yaml"
        try edit(sample).write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// Starts vendd and waits until its control socket answers. `openFileLimit` runs it under
    /// `ulimit -n` (as systemd's LimitNOFILE would); `environment` is added to the test's.
    func start(extraArguments: [String] = [], openFileLimit: Int? = nil, environment: [String: String] = [:]) throws {
        runs += 1
        let process = Process()
        let arguments =
            [
                "run", "--config", configPath, "--simulate", "--state-dir", stateDirectory,
                "--socket", socketPath,
            ] + extraArguments
        if let openFileLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(openFileLimit) && exec \"$0\" \"$@\"", builtProduct("vendd")] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: builtProduct("vendd"))
            process.arguments = arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if !process.isRunning { return }
            if (try? ControlClient(path: socketPath)) != nil { return }
            usleep(5_000)
        }
        throw HarnessError("vendd did not open its socket within 10 s; log:\n\(log)")
    }

    func client() throws -> ControlClient { try ControlClient(path: socketPath) }

    /// Sends a command and requires success.
    @discardableResult
    func send(_ command: ControlCommand) throws -> ControlResponse {
        let response = try client().send(command)
        guard response.ok else { throw HarnessError("\(command.op) refused: \(response.error?.message ?? "?")") }
        return response
    }

    func status() throws -> StatusReport {
        guard let status = try send(.status).status else { throw HarnessError("no status in the answer") }
        return status
    }

    /// Polls status until `condition` holds.
    func waitUntil(_ what: String, timeout: TimeInterval = 10, _ condition: (StatusReport) -> Bool) throws -> StatusReport {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let status = try status()
            if condition(status) { return status }
            guard Date() < deadline else { throw HarnessError("timed out waiting for \(what); last status: \(status)") }
            usleep(20_000)
        }
    }

    /// Waits until `text` appears `count` times across every run's log. Notices (hardware,
    /// links) reach the log on their own thread, after the answer to the request that caused them.
    func waitForLog(_ text: String, count: Int = 1, timeout: TimeInterval = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while allLogs.components(separatedBy: text).count - 1 < count {
            guard Date() < deadline else { throw HarnessError("'\(text)' not logged \(count)×; log:\n\(allLogs)") }
            usleep(20_000)
        }
    }

    func signal(_ number: Int32) {
        if let process { kill(process.processIdentifier, number) }
    }

    /// Waits for vendd to exit and returns its status.
    @discardableResult
    func waitForExit(timeout: TimeInterval = 20) throws -> Int32 {
        guard let process else { throw HarnessError("not started") }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            guard Date() < deadline else {
                process.terminate()
                let tail = log.split(separator: "\n").suffix(40).joined(separator: "\n")
                throw HarnessError("vendd did not exit within \(timeout) s; the end of its log:\n\(tail)")
            }
            usleep(5_000)
        }
        self.process = nil
        return process.terminationStatus
    }

    func stop() throws -> Int32 {
        signal(SIGTERM)
        return try waitForExit()
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Every run's log, oldest first.
    var allLogs: String {
        (1...max(runs, 1)).compactMap { try? String(contentsOfFile: directory.path + "/vendd-\($0).log", encoding: .utf8) }
            .joined()
    }

    func tearDown() {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        directory.remove()
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension StatusReport {
    var totalStock: Int { slots.reduce(0) { $0 + $1.stock } }
    func slot(_ id: String) -> Slot? { slots.first { $0.id == id } }
}
