import Foundation
import VendTelemetry
import VenddTestSupport

/// A real Mosquitto broker on loopback with TLS (a test CA made here with openssl), password
/// authentication and the ACL docs/mqtt.md tells operators to install. Stopped and started again
/// on the same port and persistence directory, as a broker restart is.
final class MosquittoBroker: @unchecked Sendable {
    // @unchecked: one test drives it; the process handle is only touched by its methods.
    static let machines = ["m1", "m2", "m3"]
    static let fleetUser = "fleet"
    static let operatorUser = "operator"
    static let storeUser = "store"

    let directory: String
    let port: Int
    private(set) var process: ChildProcess?
    private var runs = 0

    var caFile: String { directory + "/ca.pem" }
    var url: String { "mqtts://127.0.0.1:\(port)" }
    static func password(_ user: String) -> String { "secret-\(user)" }

    init(in parent: String, acl: String = MosquittoBroker.acl) throws {
        directory = parent + "/broker"
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        port = try LocalPort.reserve()
        try makeCertificates()
        try makeUsers()
        try acl.write(toFile: directory + "/acl", atomically: true, encoding: .utf8)
        // Run as root (in a container), mosquitto would switch to the `mosquitto` user, which
        // cannot read these files: stay the user we are.
        let config = """
            per_listener_settings false
            listener \(port) 127.0.0.1
            cafile \(directory)/ca.pem
            certfile \(directory)/server.pem
            keyfile \(directory)/server.key
            allow_anonymous false
            password_file \(directory)/passwd
            acl_file \(directory)/acl
            persistence true
            persistence_location \(directory)/data/
            user \(NSUserName())
            log_type error
            log_type warning
            log_type notice
            log_type information
            log_type subscribe

            """
        try config.write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
    }

    /// The ACL of docs/mqtt.md: each machine writes only under its own id and reads only its
    /// commands and its store acknowledgement; the fleet console reads everything; only the
    /// operator sends commands, and the store its back office's `price` and `dex`; only the store
    /// acknowledges.
    static let acl = """
        pattern write vendd/%u/events/#
        pattern write vendd/%u/backlog
        pattern write vendd/%u/state
        pattern write vendd/%u/stock
        pattern write vendd/%u/cash
        pattern write vendd/%u/zones/+
        pattern write vendd/%u/reply/#
        pattern read vendd/%u/cmd/#
        pattern read vendd/%u/stored

        user fleet
        topic read vendd/#

        user operator
        topic write vendd/+/cmd/#
        topic read vendd/+/reply/#

        user store
        topic read vendd/#
        topic write vendd/+/stored
        topic write vendd/+/cmd/price
        topic write vendd/+/cmd/dex

        """

    func start() throws {
        runs += 1
        let log = directory + "/broker-\(runs).log"
        let process = try ChildProcess(try Self.tool("mosquitto"), ["-c", directory + "/mosquitto.conf"], output: log, errors: log)
        self.process = process
        guard process.waitUntilListening(on: port) else { throw HarnessError("mosquitto did not listen on \(port); log:\n\(self.log)") }
    }

    /// SIGTERM: mosquitto saves its persistent sessions (what the subscriber has not received yet)
    /// and exits, as a broker restarted by its operator does.
    func stop() {
        process?.stop()
        process = nil
    }

    var log: String {
        (1...max(runs, 1)).compactMap { try? String(contentsOfFile: directory + "/broker-\($0).log", encoding: .utf8) }.joined()
    }

    /// `username:password`, mode 0600, for vendd's `credentials_file`.
    func credentialsFile(for user: String) throws -> String {
        let path = directory + "/\(user).credentials"
        try "\(user):\(Self.password(user))\n".write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o600)
        return path
    }

    /// The mosquitto_sub / mosquitto_pub arguments that connect as `user`.
    func clientArguments(_ user: String) -> [String] {
        ["-h", "127.0.0.1", "-p", "\(port)", "--cafile", caFile, "-u", user, "-P", Self.password(user)]
    }

    private func makeCertificates() throws {
        let d = directory
        try Self.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/ca.key", "-out", d + "/ca.pem",
                "-days", "2", "-subj", "/CN=vendd test CA",
            ])
        try Self.run(
            "openssl",
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/server.key", "-out", d + "/server.csr",
                "-subj", "/CN=localhost",
            ])
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: d + "/san.ext", atomically: true, encoding: .utf8)
        try Self.run(
            "openssl",
            [
                "x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.pem", "-CAkey", d + "/ca.key",
                "-CAcreateserial", "-out", d + "/server.pem", "-days", "2", "-extfile", d + "/san.ext",
            ])
        // A second CA that signed nothing here: a machine configured with it must refuse the broker.
        try Self.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/other-ca.key",
                "-out", d + "/other-ca.pem", "-days", "2", "-subj", "/CN=some other CA",
            ])
    }

    private func makeUsers() throws {
        let file = directory + "/passwd"
        _ = FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600])
        for user in Self.machines + [Self.fleetUser, Self.operatorUser, Self.storeUser] {
            try Self.run("mosquitto_passwd", ["-b", file, user, Self.password(user)])
        }
    }

    func tearDown() {
        stop()
    }

    // MARK: - Tools

    /// The full path of a tool the tests need; a clear failure naming its package when missing.
    static func tool(_ name: String) throws -> String {
        for directory in ["/usr/sbin", "/usr/bin", "/sbin", "/bin"] where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
        let package = name == "openssl" ? "openssl" : name == "mosquitto" ? "mosquitto" : "mosquitto-clients"
        throw HarnessError("\(name) is not installed: the fleet tests need a real broker (apt-get install \(package); scripts/test installs it)")
    }

    @discardableResult
    static func run(_ name: String, _ arguments: [String]) throws -> ProcessRun {
        let run = try ProcessRun.run(try tool(name), arguments)
        guard run.status == 0 else { throw HarnessError("\(name) \(arguments.joined(separator: " ")) failed (\(run.status)): \(run.errors)") }
        return run
    }
}

/// `mosquitto_sub` as the fleet console's user, with a persistent session (so that what is
/// published while it is away — a broker restart — still reaches it), writing `topic payload`
/// lines to a file (the payload in hex, as a backlog's holds line feeds).
final class FleetSubscriber: @unchecked Sendable {
    private let process: ChildProcess
    let outputPath: String

    convenience init(broker: MosquittoBroker, topic: String, clientID: String, user: String = MosquittoBroker.fleetUser) throws {
        try self.init(broker: broker, topics: [topic], clientID: clientID, user: user)
    }

    init(broker: MosquittoBroker, topics: [String], clientID: String, user: String = MosquittoBroker.fleetUser) throws {
        outputPath = broker.directory + "/\(clientID).out"
        process = try ChildProcess(
            try MosquittoBroker.tool("mosquitto_sub"),
            broker.clientArguments(user) + ["-c", "-i", clientID, "-q", "1"] + topics.flatMap { ["-t", $0] } + ["-F", "%t %x"],
            output: outputPath, errors: "/dev/null")
        // Subscribed once the broker says so (`log_type subscribe`: "<client> <qos> <topic>"):
        // nothing published after this is missed.
        let deadline = Date().addingTimeInterval(10)
        for topic in topics {
            while !broker.log.contains("\(clientID) 1 \(topic)") {
                guard Date() < deadline else {
                    throw HarnessError("\(clientID) did not subscribe to \(topic) within 10 s; broker log:\n\(broker.log)")
                }
                usleep(10_000)
            }
        }
    }

    /// Waits until what was received so far satisfies `condition`.
    func waitUntil(_ what: String, timeout: TimeInterval = 10, _ condition: ([(topic: String, payload: String)]) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(lines) {
            guard Date() < deadline else { throw HarnessError("timed out waiting for \(what); received:\n\(text)") }
            usleep(20_000)
        }
    }

    /// Everything received, a `topic payload` line per message.
    var text: String { lines.map { "\($0.topic) \($0.payload)" }.joined(separator: "\n") }

    /// Every message received so far.
    var lines: [(topic: String, payload: String)] {
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return output.split(separator: "\n").compactMap { line in
            guard let space = line.firstIndex(of: " ") else { return nil }
            return (String(line[..<space]), String(decoding: Self.bytes(hex: line[space...].dropFirst()), as: UTF8.self))
        }
    }

    /// Every event received so far, a backlog's one by one (each with the backlog's topic).
    var events: [(topic: String, payload: String)] {
        lines.flatMap { message in
            message.topic.hasSuffix("/backlog")
                ? EventBatch.events(in: Array(message.payload.utf8)).map { (message.topic, String(decoding: $0, as: UTF8.self)) } : [message]
        }
    }

    private static func bytes(hex: Substring) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16) }
    }

    func stop() {
        process.stop()
    }
}
