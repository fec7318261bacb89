import Foundation
import Synchronization
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

    /// Starts vendstore; `environment` adds to the test's (setenv before spawning).
    func startStore(environment: [String: String] = [:]) throws {
        for (key, value) in environment { setenv(key, value, 1) }
        defer { for key in environment.keys { unsetenv(key) } }
        process = try ChildProcess(builtProduct("vendstore"), ["--config", configPath], output: logPath, errors: logPath)
    }

    /// The process ended and was reaped by the caller.
    func storeEnded() { process = nil }

    func stopStore(_ signal: Int32 = SIGTERM) {
        process?.stop(signal)
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
    let acks = Mutex<[String: String]>([:])
    private let connected = Atomic<Bool>(false)

    init(_ url: String, name: String) throws {
        let port = Int(url.split(separator: ":").last!)!
        let acks = acks
        let connected = connected
        let holder = Mutex<MQTTClient?>(nil)
        client = try MQTTClient(clientID: name, cleanStart: true) { event in
            switch event {
            case .connected(nil):
                try? holder.withLock { $0 }?.subscribe("vendd/+/stored")
                connected.store(true, ordering: .releasing)
            case .message(let message):
                let machine = message.topic.split(separator: "/")[1]
                acks.withLock { $0[String(machine)] = String(decoding: message.payload, as: UTF8.self) }
            default: break
            }
        }
        holder.withLock { $0 = client }
        try client.start(MQTTEndpoint(host: "127.0.0.1", port: port, tls: false))
        try waitUntil("\(name) connects") { connected.load(ordering: .acquiring) }
    }

    func publish(_ topic: String, _ payload: String, retain: Bool = false) throws {
        try client.publish(topic, Array(payload.utf8), qos: 1, retain: retain)
    }

    /// The seq of the machine's latest ack, 0 before any.
    func ackedSeq(_ machine: String) -> Int64 {
        guard let text = acks.withLock({ $0[machine] }), let range = text.range(of: "\"seq\":") else { return 0 }
        return Int64(text[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }

    deinit { client.stop() }
}

func waitUntil(_ what: String, timeout: TimeInterval = 15, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard Date() < deadline else { throw ChildProcessError(description: "timed out waiting until \(what)") }
        usleep(10_000)
    }
}

/// An event payload as vendd publishes it, with its sequence.
func eventPayload(_ machine: String, _ seq: Int64, id: String? = nil, type: String = "vend-ended") -> String {
    #"{"id":"\#(id ?? "\(machine)-\(seq)")","machine":"\#(machine)","at":1790000000000,"type":"\#(type)","currency":"EUR","amount":"1.50","seq":\#(seq)}"#
}
