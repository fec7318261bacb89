import Foundation
import Testing
import VenddTestSupport

/// A real Mosquitto on 127.0.0.1 for the store's tests: anonymous and in the clear (the TLS and
/// ACL setup is VenddProcessTests' MosquittoBroker), persistent so that vendstore's session
/// survives vendstore's kills, and with room to queue a whole test's events for it.
final class MosquittoRig: @unchecked Sendable {
    // @unchecked: one test drives it.
    let directory: String
    let port: Int
    private var process: ChildProcess?

    var url: String { "mqtt://127.0.0.1:\(port)" }

    init(in parent: String) throws {
        directory = parent + "/broker"
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        port = try LocalPort.reserve()
        try """
        listener \(port) 127.0.0.1
        allow_anonymous true
        persistence true
        persistence_location \(directory)/data/
        max_queued_messages 1000000
        max_inflight_messages 1000
        user \(NSUserName())
        log_type error
        log_type warning

        """.write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
    }

    func start() throws {
        let log = directory + "/mosquitto.log"
        let process = try ChildProcess("/usr/sbin/mosquitto", ["-c", directory + "/mosquitto.conf"], output: log, errors: log)
        self.process = process
        guard process.waitUntilListening(on: port) else {
            throw ChildProcessError(description: "mosquitto did not listen: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
    }

    /// SIGKILL: no goodbye, nothing saved beyond what its persistence had already written.
    func kill() {
        process?.stop(SIGKILL)
        process = nil
    }

    func stop() {
        if let process, !process.stop(SIGTERM, within: 20) { Issue.record("mosquitto did not end within 20 s of SIGTERM: killed") }
        process = nil
    }
}
