import Foundation
import Synchronization
import Testing
import VendFleetStore
import VendMQTT
import VenddTestSupport

/// Real vendstore processes on a real Mosquitto, storing into SQLite in a temporary directory or
/// into a PostgreSQL database. Instance 0 is the one most tests need; several instances (each its
/// own client id, configuration and log) share the database and, with `sharedGroup`, the messages.
final class StoreProcessRig: @unchecked Sendable {
    // @unchecked: one test drives it.
    let directory: TemporaryDirectory
    let broker: MosquittoRig
    /// The PostgreSQL database's conninfo; nil: SQLite at `databasePath`.
    let postgresql: String?
    private let sharedGroup: String?
    private let batchMilliseconds: Int
    var databasePath: String { directory.path + "/fleet.db" }
    private var stores: [Int: VendstoreProcess] = [:]

    init(batchMilliseconds: Int = 20, postgresql: String? = nil, sharedGroup: String? = nil) throws {
        directory = try TemporaryDirectory()
        self.postgresql = postgresql
        self.sharedGroup = sharedGroup
        self.batchMilliseconds = batchMilliseconds
        broker = try MosquittoRig(in: directory.path)
        try broker.start()
    }

    /// Instance `instance`: its own client id, configuration file and log.
    private func store(_ instance: Int) -> VendstoreProcess {
        if let store = stores[instance] { return store }
        let store = VendstoreProcess(
            configPath: directory.path + "/vendstore-\(instance).yaml", logPath: directory.path + "/vendstore-\(instance).log")
        stores[instance] = store
        return store
    }

    func process(_ instance: Int = 0) -> ChildProcess? { stores[instance]?.process }

    private func config(_ instance: Int) -> String {
        let database = postgresql.map { "postgresql: \"\($0)\"" } ?? "sqlite: \(databasePath)"
        return """
            mqtt:
              broker: \(broker.url)
              allow_plaintext: true
              client_id: vendstore-test-\(instance)
            \(sharedGroup.map { "  shared_group: \($0)\n" } ?? "")database:
              \(database)
            ingest:
              batch_milliseconds: \(batchMilliseconds)
              ack_milliseconds: 20

            """
    }

    /// The database the instances store into, opened by the test.
    func openStore() throws -> FleetStore {
        if let postgresql { return try PostgresFleetStore(conninfo: postgresql, now: 0) }
        return try SQLiteFleetStore(path: databasePath, now: 0)
    }

    /// Starts vendstore and waits until it is connected.
    func startStore(instance: Int = 0) throws { try store(instance).start(config: config(instance)) }

    /// Starts vendstore without waiting for it (it may kill itself at once); `environment` is its own.
    func launchStore(instance: Int = 0, environment: [String: String]) throws {
        try store(instance).launch(config: config(instance), environment: environment)
    }

    /// The process ended and was reaped by the caller.
    func storeEnded(instance: Int = 0) { stores[instance]?.ended() }

    /// Stops vendstore; it must end within 20 s of SIGTERM (it is killed then, and the test fails).
    func stopStore(_ signal: Int32 = SIGTERM, instance: Int = 0) {
        if stores[instance]?.stop(signal) == false {
            Issue.record("vendstore \(instance) did not end within 20 s of signal \(signal): killed\n\(log(of: instance))")
        }
    }

    var log: String { log(of: 0) }

    func log(of instance: Int) -> String { stores[instance]?.log ?? "" }

    func tearDown() {
        for instance in stores.keys { stopStore(SIGKILL, instance: instance) }
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
