import Foundation
import Testing
import VendFleetStore
import VenddTestSupport

@testable import VendOffice

/// A server-sent events client: the request sent, then the stream read as it comes.
final class EventStreamClient {
    private let fd: Int32
    /// Everything read so far (chunked framing included).
    private(set) var received = ""

    init(port: Int, cookie: String?) throws {
        fd = try OfficeHTTPClient.connectLoopback(port)
        let request =
            "GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\(cookie.map { "Cookie: \($0)\r\n" } ?? "")\r\n"
        _ = request.withCString { write(fd, $0, strlen($0)) }
    }

    deinit { close(fd) }

    /// Reads until `text` has arrived (true), the server closed (false) or `seconds` passed (false).
    func waitFor(_ text: String, seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(text) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(left * 1000) + 1) > 0 else { continue }
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { return false }
            received += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        return true
    }
}

/// Polls `condition` for up to 10 s.
private func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0..<200 {
        if condition() { return true }
        usleep(50_000)
    }
    return condition()
}

@Suite("The fleet page live (server-sent events)", .serialized, .timeLimit(.minutes(3)))
struct OfficeLiveTests {
    private func cookie(_ client: OfficeHTTPClient) -> String { "\(Office.sessionCookie)=\(client.jar[Office.sessionCookie] ?? "")" }

    @Test func aDriversStreamNamesTheMachinesOfEachCommitAndNeedsASession() throws {
        let rig = try OfficeRig(.sqlite)
        defer { rig.stop() }
        let dan = try rig.loggedIn("dan")
        let stream = try EventStreamClient(port: rig.port, cookie: cookie(dan))
        #expect(stream.waitFor("retry: 2000\n\n"))
        #expect(stream.received.hasPrefix("HTTP/1.1 200"))
        #expect(stream.received.lowercased().contains("content-type: text/event-stream"))
        rig.service.changed(["m2", "m1"])
        #expect(stream.waitFor("event: change\ndata: m1 m2\n\n"))
        rig.service.changed(Set((0..<101).map { "m\($0)" }))
        #expect(stream.waitFor("event: change\ndata: *\n\n"))
        // No session, or one that ended: no stream.
        for jar in [nil, "\(Office.sessionCookie)=forged"] {
            let refused = try EventStreamClient(port: rig.port, cookie: jar)
            #expect(refused.waitFor("\r\n\r\n"))
            #expect(refused.received.hasPrefix("HTTP/1.1 303") && refused.received.contains("Location: /login"))
        }
        #expect(rig.service.liveStreams == 1)
    }

    @Test func streamsAreBoundedAndAClosedOneIsFreedAtTheNextEvent() throws {
        let rig = try OfficeRig(.sqlite)
        defer { rig.stop() }
        let ann = try rig.loggedIn("ann")
        var streams: [EventStreamClient] = []
        for _ in 0..<LiveFeed.maxStreams {
            let stream = try EventStreamClient(port: rig.port, cookie: cookie(ann))
            #expect(stream.waitFor("retry: 2000"))
            streams.append(stream)
        }
        let refused = try EventStreamClient(port: rig.port, cookie: cookie(ann))
        #expect(refused.waitFor("\r\n\r\n"))
        #expect(refused.received.hasPrefix("HTTP/1.1 503"))
        // A client that went away is noticed when the next event cannot be written.
        streams.removeLast()
        #expect(
            eventually {
                rig.service.changed(["m1"])
                return rig.service.liveStreams == LiveFeed.maxStreams - 1
            })
        let next = try EventStreamClient(port: rig.port, cookie: cookie(ann))
        #expect(next.waitFor("retry: 2000"))
    }

    @Test func twoCommitsOfTheSameMachinesAreTwoEventsAndALaterPageGetsTheLast() throws {
        let rig = try OfficeRig(.sqlite)
        defer { rig.stop() }
        let dan = try rig.loggedIn("dan")
        let stream = try EventStreamClient(port: rig.port, cookie: cookie(dan))
        #expect(stream.waitFor("retry: 2000\n\n"))
        rig.service.changed(["m1"])
        #expect(stream.waitFor("id: 1\nevent: change\ndata: m1\n\n"))
        rig.service.changed(["m1"])
        #expect(stream.waitFor("retry: 2000\nid: 2\nevent: change\ndata: m1\n\n"))
        let later = try EventStreamClient(port: rig.port, cookie: cookie(dan))
        #expect(later.waitFor("id: 2\nevent: change\ndata: m1\n\n"))
    }

    @Test(arguments: Engine.allCases)
    func theStateShowsTheCreditACustomerHasOnTheMachine(_ engine: Engine) throws {
        let rig = try OfficeRig(engine)
        defer { rig.stop() }
        func state(_ machine: String, credit: String) -> RetainedUpdate {
            RetainedUpdate(
                machine: machine, subject: "state",
                payload: #"{"machine":"\#(machine)","online":true,"state":"in-service","credit":"\#(credit)","currency":"KRW","at":\#(rig.noon)}"#)
        }
        _ = try rig.store.commit(events: [], retained: [state("m1", credit: "1500"), state("m2", credit: "0")], receivedAt: rig.noon)
        var dan = try rig.loggedIn("dan")
        let page = try dan.get("/fleet").body
        #expect(page.contains("<br>in-service · credit 1,500원</td>"))
        #expect(page.components(separatedBy: "credit").count == 2, "no credit shown for m2's 0")
    }

    @Test func theScriptIsTheOfficesOwnAndThePageWorksWithoutIt() throws {
        let rig = try OfficeRig(.sqlite)
        defer { rig.stop() }
        var dan = try rig.loggedIn("dan")
        let page = try dan.get("/fleet")
        let policy = try #require(page.header("Content-Security-Policy"))
        #expect(policy.contains("script-src 'self';") && policy.contains("connect-src 'self';"))
        #expect(!policy.contains("script-src 'unsafe-inline'"))
        #expect(page.body.components(separatedBy: "<script").count == 2)
        #expect(page.body.contains(#"<script src="/office.js" defer></script>"#) && page.body.contains(#"<div id="live">"#))
        let script = try dan.get("/office.js")
        #expect(script.status == 200 && script.header("Content-Type") == "text/javascript; charset=utf-8")
        #expect(script.body.contains(#"new EventSource("/events")"#))
    }
}
