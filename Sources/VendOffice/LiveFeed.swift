import Synchronization
import VendHTTP

/// The fleet page's live updates: server-sent events (`text/event-stream`) on `/events`, one
/// `change` event naming the machines each time the store commits something of theirs. The
/// page's script (`/office.js`) then fetches the page again and swaps its tables. The server
/// bounds the streams (`maxStreams`) and sends the heartbeat that finds the clients gone.
public final class LiveFeed: Sendable {
    public static let maxStreams = 64
    /// Machines named in one event at most; beyond, `*` (all).
    static let maxNamed = 100
    /// The browser waits 2 s before it reconnects after an end.
    private static let retry = "retry: 2000\n"

    let broadcast = HTTPEventBroadcast()
    /// Numbers the events: the broadcast sends none equal to the one before, and two commits of
    /// the same machines are two changes.
    private let sequence = Atomic<UInt64>(0)

    init() { broadcast.publish(Array((Self.retry + "\n").utf8)) }

    /// The store committed events or retained messages of `machines`. A page that connects later
    /// gets the last event at once, as it refreshes on opening anyway.
    public func changed(_ machines: Set<String>) {
        guard !machines.isEmpty else { return }
        // Machine ids are topic levels: no line breaks; sorted, so that an event reads the same.
        let named = machines.count > Self.maxNamed ? "*" : machines.sorted().joined(separator: " ")
        let id = sequence.add(1, ordering: .relaxed).newValue
        broadcast.publish(Array("\(Self.retry)id: \(id)\nevent: change\ndata: \(named)\n\n".utf8))
    }
}
