import Foundation
import Synchronization
import Testing
import VendMQTT
import VenddTestSupport

/// A real vendstore process on a real Mosquitto, with SQLite in a temporary directory.
final class StoreProcessRig: @unchecked Sendable {
    // @unchecked: one test drives it.
    let directory: TemporaryDirectory
    let broker: MosquittoRig
    var databasePath: String { directory.path + "/fleet.db" }
    var configPath: String { directory.path + "/vendstore.yaml" }
    var logPath: String { directory.path + "/vendstore.log" }
    private(set) var process: ChildProcess?

    init(batchMilliseconds: Int = 20) throws {
        directory = try TemporaryDirectory()
        broker = try MosquittoRig(in: directory.path)
        try broker.start()
        try """
        mqtt:
          broker: \(broker.url)
          allow_plaintext: true
          client_id: vendstore-test
        database:
          sqlite: \(databasePath)
        ingest:
          batch_milliseconds: \(batchMilliseconds)
          ack_milliseconds: 20

        """.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// Starts vendstore and waits until it is connected.
    func startStore() throws {
        let connections = log.components(separatedBy: "connected to the broker").count
        try launchStore(environment: [:])
        // Its subscriptions follow the CONNACK at once: give them a moment to reach the broker.
        try waitUntil("vendstore connects") { log.components(separatedBy: "connected to the broker").count > connections }
        usleep(200_000)
    }

    /// Starts vendstore without waiting for it (it may kill itself at once); `environment` adds to the test's.
    func launchStore(environment: [String: String]) throws {
        for (key, value) in environment { setenv(key, value, 1) }
        defer { for key in environment.keys { unsetenv(key) } }
        process = try ChildProcess(builtProduct("vendstore"), ["--config", configPath], output: logPath, errors: logPath)
    }

    /// The process ended and was reaped by the caller.
    func storeEnded() { process = nil }

    /// Stops vendstore; it must end within 20 s of SIGTERM (it is killed then, and the test fails).
    func stopStore(_ signal: Int32 = SIGTERM) {
        if let process, !process.stop(signal, within: 20) {
            Issue.record("vendstore did not end within 20 s of signal \(signal): killed\n\(log)")
        }
        process = nil
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func tearDown() {
        stopStore(SIGKILL)
        broker.stop()
        directory.remove()
    }
}

/// A machine's side of the broker for tests: publishes, and follows the `stored` acks.
final class TestMachineLink: Sendable {
    let client: MQTTClient
    private final class Shared: Sendable {
        let acks = Mutex<[String: String]>([:])
        let connected = Atomic<Bool>(false)
        let client = Mutex<MQTTClient?>(nil)
    }

    private let shared: Shared

    init(_ url: String, name: String) throws {
        let port = Int(url.split(separator: ":").last!)!
        let shared = Shared()
        self.shared = shared
        client = try MQTTClient(clientID: name, cleanStart: true) { event in
            switch event {
            case .connected(nil):
                try? shared.client.withLock { $0 }?.subscribe("vendd/+/stored")
                shared.connected.store(true, ordering: .releasing)
            case .message(let message):
                let machine = message.topic.split(separator: "/")[1]
                shared.acks.withLock { $0[String(machine)] = String(decoding: message.payload, as: UTF8.self) }
            default: break
            }
        }
        shared.client.withLock { $0 = client }
        try client.start(MQTTEndpoint(host: "127.0.0.1", port: port, tls: false))
        try waitUntil("\(name) connects") { shared.connected.load(ordering: .acquiring) }
    }

    func publish(_ topic: String, _ payload: String, retain: Bool = false) throws {
        try client.publish(topic, Array(payload.utf8), qos: 1, retain: retain)
    }

    /// The machine's latest ack as received.
    func ack(_ machine: String) -> String? { shared.acks.withLock { $0[machine] } }

    /// The seq of the machine's latest ack, 0 before any.
    func ackedSeq(_ machine: String) -> Int64 {
        guard let text = shared.acks.withLock({ $0[machine] }), let range = text.range(of: "\"seq\":") else { return 0 }
        return Int64(text[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }

    deinit { client.stop() }
}

func waitUntil(_ what: String, timeout: TimeInterval = 15, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard Date() < deadline else { throw ChildProcessError(description: "gave up after \(Int(timeout)) s waiting until \(what)") }
        usleep(10_000)
    }
}

/// An event payload as vendd publishes it, with its sequence.
func eventPayload(_ machine: String, _ seq: Int64, id: String? = nil, type: String = "vend-ended") -> String {
    #"{"id":"\#(id ?? "\(machine)-\(seq)")","machine":"\#(machine)","at":1790000000000,"type":"\#(type)","currency":"EUR","amount":"1.50","seq":\#(seq)}"#
}
