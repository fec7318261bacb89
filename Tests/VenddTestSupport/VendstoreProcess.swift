import Foundation

/// A vendstore process for the tests: its configuration file, its log, and the process of its
/// current life. VendFleetStoreTests' rigs and VenddProcessTests' fleet tests start it this way.
public final class VendstoreProcess: @unchecked Sendable {
    // @unchecked: one test drives it.
    public let configPath: String
    public let logPath: String
    public private(set) var process: ChildProcess?

    public init(configPath: String, logPath: String) {
        self.configPath = configPath
        self.logPath = logPath
    }

    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Writes `config` and starts vendstore without waiting for it (it may kill itself at once).
    /// `environment` goes through env(1), which execs vendstore under the same pid: never the test
    /// process's own environment, which the tests running alongside would pass on to theirs.
    public func launch(config: String, environment: [String: String] = [:]) throws {
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        process = try ChildProcess(
            "/usr/bin/env", variables + [builtProduct("vendstore"), "--config", configPath], output: logPath, errors: logPath)
    }

    /// Starts vendstore and waits until it is connected to the broker (at most `timeout`).
    public func start(config: String, timeout: TimeInterval = 15) throws {
        let connected = "connected to the broker"
        let before = log.components(separatedBy: connected).count
        try launch(config: config)
        let deadline = Date().addingTimeInterval(timeout)
        while log.components(separatedBy: connected).count <= before {
            guard process?.isRunning == true, Date() < deadline else {
                throw ChildProcessError(description: "vendstore did not connect within \(Int(timeout)) s:\n\(log)")
            }
            usleep(10_000)
        }
        // Its subscriptions follow the CONNACK at once: give them a moment to reach the broker.
        usleep(200_000)
    }

    /// `vendstore user …` on `config` with `password` as stdin's first line, as an operator types it.
    public static func user(_ arguments: [String], config: String, password: String = "") throws -> ProcessRun {
        try ProcessRun.run(
            "/bin/sh",
            ["-c", #"printf '%s\n' "$OFFICE_PASSWORD" | "$0" user "$@" --config "$OFFICE_CONFIG""#, builtProduct("vendstore")] + arguments,
            environment: ["OFFICE_PASSWORD": password, "OFFICE_CONFIG": config])
    }

    /// The process ended and was reaped by the caller.
    public func ended() { process = nil }

    /// Sends `signal` and waits; false if it had to be SIGKILLed after `seconds`.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM, within seconds: Double = 20) -> Bool {
        defer { process = nil }
        return process?.stop(signal, within: seconds) ?? true
    }
}
