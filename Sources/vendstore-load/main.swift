import ArgumentParser
import Synchronization
import VendMQTT
import VendPOSIX
import VendTelemetry

#if canImport(Glibc)
    import Glibc
#endif

/// `vendstore-load`: N simulated machines publishing vendd's `event` payloads (docs/mqtt.md) with
/// their sequences, keeping each event until the store's `stored` acknowledgement covers it and
/// sending again what stays unacknowledged, as vendd with `keep_until_stored` does: several
/// events a machine sends at once (its outbox full after an outage, a resend) go in backlog
/// batches, one alone on its own topic. Prints one JSON line: events, acknowledged, seconds,
/// rate, resent, latency from first publish to the ack.
@main
struct VendStoreLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vendstore-load", abstract: "Publish vendd events for simulated machines until the store has acknowledged them all.")

    @Option(help: ArgumentHelp("The broker (plain mqtt://host:port).", valueName: "url")) var broker: String
    @Option(help: "The machines' topic prefix.") var topicPrefix = "vendd"
    @Option(help: "How many machines.") var machines = 1000
    @Option(help: "Events each machine sends.") var eventsPerMachine = 100
    @Option(help: "The first machine's number (machines are m00001, m00002, …).") var firstMachine = 1
    @Option(help: "At most this many events sent and not yet acknowledged.") var window = 20_000
    @Option(help: "Events per second in all (0: as fast as the window allows).") var rate = 0
    @Option(help: "Send an unacknowledged event again after this long.") var resendMilliseconds = 2000
    @Option(help: "Give up after this long.") var timeoutSeconds = 300
    @Option(help: "At most this many events in one backlog message (1: each event on its own topic, as vendd without keep_until_stored).")
    var batch = EventBatch.maxEvents

    /// One machine's outbox: events from `acked + 1` up to `next - 1` wait for the store.
    struct Machine {
        let name: String
        var next: Int64 = 1
        var acked: Int64 = 0
        /// Payloads and times (monotonic ns) of the unacknowledged events, oldest first.
        var waiting: [(seq: Int64, payload: [UInt8], firstSent: UInt64, lastSent: UInt64)] = []
    }

    func run() throws {
        guard let endpoint = Self.endpoint(broker) else { throw ValidationError("'\(broker)' is not mqtt://host:port") }
        // Acknowledgements received since the main loop last took them.
        let acks = Mutex<[String: Int64]>([:])
        let connected = Atomic<Bool>(false)
        let prefix = topicPrefix
        let connection = Mutex<MQTTClient?>(nil)
        let client = try MQTTClient(clientID: "vendstore-load-\(getpid())", cleanStart: true) { event in
            switch event {
            case .connected(nil):
                try? connection.withLock { $0 }?.subscribe("\(prefix)/+/stored")
                connected.store(true, ordering: .releasing)
            case .disconnected:
                connected.store(false, ordering: .releasing)
            case .message(let message):
                let levels = message.topic.split(separator: "/")
                guard levels.count >= 2, let seq = Self.seq(in: message.payload) else { return }
                let machine = String(levels[levels.count - 2])
                acks.withLock { $0[machine] = seq }
            default:
                break
            }
        }
        connection.withLock { $0 = client }
        try client.start(endpoint)
        let started = MonotonicClock.nanoseconds
        while !connected.load(ordering: .acquiring) {
            guard MonotonicClock.nanoseconds - started < 10_000_000_000 else { throw ValidationError("cannot connect to \(broker)") }
            usleep(10_000)
        }

        var fleet = (0..<machines).map { Machine(name: Self.name(firstMachine + $0)) }
        let indexOf = Dictionary(uniqueKeysWithValues: fleet.indices.map { (fleet[$0].name, $0) })
        let topics = FleetTopics(prefix: prefix)
        let total = machines * eventsPerMachine
        var sent = 0, acknowledged = 0, resent = 0, inFlight = 0
        var latencies: [UInt64] = []
        latencies.reserveCapacity(total)
        let resendAfter = UInt64(resendMilliseconds) * 1_000_000
        var cursor = 0
        let begin = MonotonicClock.nanoseconds
        var lastResendScan = begin
        while acknowledged < total {
            let now = MonotonicClock.nanoseconds
            guard now - begin < UInt64(timeoutSeconds) * 1_000_000_000 else { break }
            // Acknowledgements: forget what the store holds. As vendd does, one beyond the last
            // sequence given is not believed (a retained one left by another store's run).
            let fresh = acks.withLock { received in
                defer { received = [:] }
                return received
            }
            for (name, ack) in fresh {
                guard let index = indexOf[name], ack > fleet[index].acked, ack < fleet[index].next else { continue }
                fleet[index].acked = ack
                while let first = fleet[index].waiting.first, first.seq <= ack {
                    latencies.append(now - first.firstSent)
                    fleet[index].waiting.removeFirst()
                    acknowledged += 1
                    inFlight -= 1
                }
            }
            // New events, round robin, within the window and the rate.
            var budget = window - inFlight
            if rate > 0 { budget = min(budget, Int(Double(rate) * Double(now - begin) / 1e9) - sent) }
            var published = 0
            while budget > 0, sent < total, published < 2_000 {
                let index = cursor % machines
                cursor += 1
                let count = min(batch, budget, eventsPerMachine - Int(fleet[index].next) + 1)
                guard count > 0 else { continue }
                let payloads = (0..<count).map { Self.event(machine: fleet[index].name, seq: fleet[index].next + Int64($0)) }
                let at = MonotonicClock.nanoseconds
                let ok = Self.publish(payloads, machine: fleet[index].name, topics: topics, client: client)
                for payload in payloads {
                    fleet[index].waiting.append((fleet[index].next, payload, at, ok ? at : 0))
                    fleet[index].next += 1
                }
                sent += count
                inFlight += count
                budget -= count
                published += 1
            }
            // Resends: what stayed unacknowledged too long goes again, same id, same seq.
            let scan = MonotonicClock.nanoseconds
            if scan - lastResendScan > 100_000_000 {
                lastResendScan = scan
                for index in fleet.indices {
                    let due = fleet[index].waiting.indices.filter { scan - fleet[index].waiting[$0].lastSent > resendAfter }
                    for run in stride(from: 0, to: due.count, by: batch).map({ due[$0..<min($0 + batch, due.count)] }) {
                        guard Self.publish(run.map { fleet[index].waiting[$0].payload }, machine: fleet[index].name, topics: topics, client: client)
                        else { break }
                        for position in run { fleet[index].waiting[position].lastSent = scan }
                        resent += run.count
                    }
                }
            }
            if published == 0 { usleep(1_000) }
        }
        let seconds = Double(MonotonicClock.nanoseconds - begin) / 1e9
        latencies.sort()
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? 0 : Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]) / 1e6
        }
        print(
            "{\"events\":\(total),\"acknowledged\":\(acknowledged),\"seconds\":\(seconds),\"rate\":\(Double(acknowledged) / seconds),\"resent\":\(resent),\"latency_p50_ms\":\(percentile(0.5)),\"latency_p99_ms\":\(percentile(0.99))}"
        )
        client.stop()
        if acknowledged < total { throw ExitCode(1) }
    }

    /// One event on its own topic, several as a backlog message (as vendd sends them). False if
    /// the client could not take it (not connected): it goes again with the resends.
    static func publish(_ payloads: [[UInt8]], machine: String, topics: FleetTopics, client: MQTTClient) -> Bool {
        let topic = payloads.count == 1 ? topics.event(machine, .vendEnded) : topics.backlog(machine)
        return (try? client.publish(topic, EventBatch.payload(payloads), qos: 1)) != nil
    }

    static func name(_ number: Int) -> String {
        let digits = String(number)
        return "m" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits
    }

    static func endpoint(_ url: String) -> MQTTEndpoint? {
        guard url.hasPrefix("mqtt://") else { return nil }
        let rest = url.dropFirst(7).split(separator: ":")
        guard rest.count == 2, let port = Int(rest[1]) else { return nil }
        return MQTTEndpoint(host: String(rest[0]), port: port, tls: false)
    }

    /// `"seq":N` in an acknowledgement.
    static func seq(in payload: [UInt8]) -> Int64? {
        let key = Array(#""seq":"#.utf8)
        guard payload.count > key.count,
            let start = (0...(payload.count - key.count)).first(where: { payload[$0..<($0 + key.count)].elementsEqual(key) })
        else { return nil }
        let digits = payload[(start + key.count)...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        return Int64(String(decoding: digits, as: UTF8.self))
    }

    /// A vend as vendd reports it, with its sequence.
    static func event(machine: String, seq: Int64) -> [UInt8] {
        Array(
            "{\"id\":\"\(uuid())\",\"machine\":\"\(machine)\",\"at\":\(WallClock.milliseconds),\"type\":\"vend-ended\",\"currency\":\"EUR\",\"slot\":\"A\(seq % 8 + 1)\",\"amount\":\"1.50\",\"outcome\":\"sold\",\"payment\":\"cash\",\"vend\":\(seq),\"seq\":\(seq)}"
                .utf8)
    }

    /// A random version-4-shaped id (the generator's own work is not what the benchmark measures).
    static func uuid() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for position in 0..<16 {
            if [4, 6, 8, 10].contains(position) { text.append(UInt8(ascii: "-")) }
            let byte = UInt8.random(in: 0...255, using: &generator)
            text += [digits[Int(byte >> 4)], digits[Int(byte & 15)]]
        }
        return String(decoding: text, as: UTF8.self)
    }
}
