import Testing
import VendFleetStore
import VendTelemetry
import VenddTestSupport

@testable import VendFleetIngest

/// A machine's backlog (`<prefix>/<machine>/backlog`, events one per line): each line is checked
/// as an event on its own topic would be, a bad one refused and logged with the machine, its line
/// and the reason, and nothing else of the message lost.
@Suite struct BacklogTests {
    @Test func eachLineIsAnEventAndABadLineLosesNothingElse() throws {
        let lines = [
            eventPayload("m2", 1), "not json", eventPayload("m2", 2, type: "refund"), eventPayload("m2", 3, type: "a/b"),
            eventPayload("m1", 4), eventPayload("m2", 0), eventPayload("m2", 5, type: "fault"),
        ]
        let (batch, log) = try take([("vendd/m2/backlog", lines.joined(separator: "\n") + "\n")])
        #expect(batch.events.map(\.seq) == [1, 2, 4, 5])
        #expect(batch.events.map(\.type) == ["vend-ended", "refund", "vend-ended", "fault"])
        #expect(batch.events.allSatisfy { $0.machine == "m2" }, "the topic is the identity, not the payload")
        #expect(batch.events.map(\.payload) == [lines[0], lines[2], lines[4], lines[6]], "each event's text as sent")
        let refusals = log.filter { $0.hasPrefix("error") }
        #expect(refusals.count == 3, "\(log)")
        #expect(refusals[0].hasPrefix("error refused event 2 of 7 on vendd/m2/backlog: not an event"), "\(refusals)")
        #expect(refusals[1].hasPrefix("error refused event 4 of 7 on vendd/m2/backlog: the type 'a/b' is not one a topic level could name"))
        #expect(refusals[2].hasPrefix("error refused event 6 of 7 on vendd/m2/backlog: seq 0"))
        #expect(refusals.allSatisfy { $0.contains("machine=m2") && $0.contains("topic=vendd/m2/backlog") })
        #expect(log.contains { $0.hasPrefix("warning") && $0.contains("names machine 'm1'") }, "\(log)")
    }

    @Test func theStoreSubscribesToBacklogsAndKnowsTheirTopic() {
        let topics = FleetTopics(prefix: "fleet")
        #expect(topics.subscriptions(sharedGroup: "g").contains("$share/g/fleet/+/backlog"))
        #expect(topics.classify("fleet/m9/backlog") == .backlog(machine: "m9"))
        #expect(topics.classify("fleet/m9/backlog/x") == nil && topics.classify("fleet//backlog") == nil)
    }

    @Test func anEmptyBacklogIsNothing() throws {
        let (batch, log) = try take([("vendd/m2/backlog", "")])
        #expect(batch.isEmpty && log.isEmpty)
    }
}
