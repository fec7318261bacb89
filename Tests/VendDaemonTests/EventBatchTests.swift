import FoundationEssentials
import Testing
import VendTelemetry

/// The backlog's format (docs/mqtt.md): events one per line, in runs bounded in count and bytes.
@Suite struct EventBatchTests {
    private func payloads(_ sizes: [Int]) -> [[UInt8]] {
        sizes.enumerated().map { index, size in Array(repeating: UInt8(ascii: "a") + UInt8(index % 26), count: size) }
    }

    @Test func runsAreBoundedByCountAndBytesAndKeepTheOrder() {
        #expect(EventBatch.runs(of: payloads(Array(repeating: 10, count: 250))) == [0..<100, 100..<200, 200..<250])
        // 64 KiB: each run's payloads and the line feeds between them fit.
        let big = payloads(Array(repeating: 30_000, count: 5))
        #expect(EventBatch.runs(of: big) == [0..<2, 2..<4, 4..<5])
        #expect(EventBatch.runs(of: payloads([10, 70_000, 10])) == [0..<1, 1..<2, 2..<3], "a payload past the limit goes alone")
        #expect(EventBatch.runs(of: payloads([])).isEmpty)
        let runs = EventBatch.runs(of: payloads(Array(repeating: 700, count: 300)), maxEvents: 50, maxBytes: 10_000)
        #expect(runs.allSatisfy { run in run.count <= 50 && run.count * 701 - 1 <= 10_000 })
        #expect(runs.flatMap { $0 } == Array(0..<300))
    }

    @Test func aBacklogSplitsBackIntoTheEventsAsSent() throws {
        var event = TelemetryEvent(id: "e1", machine: "m1", at: 1, type: .fault, currency: "EUR")
        event.reason = "line one\nline two\r\n{\"not\": \"a new event\"}"
        event.seq = 7
        let other = TelemetryEvent(id: "e2", machine: "m1", at: 2, type: .refund, currency: "EUR")
        let encoded = try [event, other].map { Array(try JSONEncoder().encode($0)) }
        #expect(encoded.allSatisfy { !$0.contains(UInt8(ascii: "\n")) }, "an encoded event is one line")
        let lines = EventBatch.events(in: EventBatch.payload(encoded))
        #expect(lines.map(Array.init) == encoded)
        #expect(try JSONDecoder().decode(TelemetryEvent.self, from: Data(lines[0])) == event)
        #expect(EventBatch.events(in: EventBatch.payload(encoded) + [UInt8(ascii: "\n")]).count == 2, "a trailing line feed adds nothing")
    }

    @Test func theFleetConsoleReadsABacklogsEvents() throws {
        var fault = TelemetryEvent(id: "e1", machine: "m1", at: 1_000, type: .fault, currency: "EUR")
        fault.reason = "coin acceptor gone"
        let refund = TelemetryEvent(id: "e2", machine: "m1", at: 2_000, type: .refund, currency: "EUR")
        var view = FleetView(topics: FleetTopics(prefix: "vendd"))
        let backlog = EventBatch.payload(try [fault, refund].map { Array(try JSONEncoder().encode($0)) })
        let taken = view.take(topic: "vendd/m1/backlog", payload: backlog)
        #expect(taken)
        #expect(view.machines["m1"]?.lastFault == "coin acceptor gone" && view.machines["m1"]?.lastSeen == 2_000)
        let garbage = view.take(topic: "vendd/m1/backlog", payload: Array("garbage\n".utf8))
        #expect(!garbage)
    }
}
