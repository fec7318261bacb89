import Synchronization

/// One stream of server-sent events for any number of clients: every client gets the latest
/// event when it connects, then each new one. The server keeps a few unsent events per client; a
/// client that reads slower loses the older ones, never the latest.
public final class HTTPEventBroadcast: Sendable {
    private struct State {
        var latest: [UInt8]?
        var clients: [EventStream] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Sends `event` (one whole message, `HTTPEventBroadcast.message(data:)`) to every client. An
    /// event equal to the latest is not sent again; false then.
    @discardableResult
    public func publish(_ event: [UInt8]) -> Bool {
        state.withLock { state in
            guard state.latest != event else { return false }
            state.latest = event
            // A client that has gone is let go here.
            state.clients.removeAll { !$0.send(event) }
            return true
        }
    }

    /// The clients following now (those gone are counted until the next event finds them out).
    public var subscriberCount: Int { state.withLock { $0.clients.count } }

    /// `client` gets the latest event now (if any) and every later one.
    func subscribe(_ client: EventStream) {
        state.withLock { state in
            if let latest = state.latest, !client.send(latest) { return }
            state.clients.append(client)
        }
    }

    /// One `data:` message: a `data:` line per line of `text`, and the empty line that ends it.
    public static func message(data text: String) -> [UInt8] {
        var message: [UInt8] = []
        // Bytes, not characters: "\r\n" is one Character, and a CR alone would end a line too.
        let (lf, cr) = (UInt8(ascii: "\n"), UInt8(ascii: "\r"))
        for line in Array(text.utf8).split(separator: lf, omittingEmptySubsequences: false) {
            message += Array("data: ".utf8) + line.filter { $0 != cr } + [lf]
        }
        return message + [lf]
    }
}
