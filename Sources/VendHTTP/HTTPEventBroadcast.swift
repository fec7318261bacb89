import Synchronization

/// One stream of server-sent events for any number of clients: every client gets the latest
/// event when it connects, then each new one. The server keeps a few unsent events per client; a
/// client that reads slower loses the older ones, never the latest.
public final class HTTPEventBroadcast: Sendable {
    public typealias Sink = @Sendable ([UInt8]) -> Void

    private struct State {
        var latest: [UInt8]?
        var next = 0
        var sinks: [Int: Sink] = [:]
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
            for sink in state.sinks.values { sink(event) }
            return true
        }
    }

    /// The clients following now.
    public var subscriberCount: Int { state.withLock { $0.sinks.count } }

    /// `sink` gets the latest event now (if any) and every later one, on the publishing thread.
    func subscribe(_ sink: @escaping Sink) -> Int {
        state.withLock { state in
            state.next += 1
            state.sinks[state.next] = sink
            if let latest = state.latest { sink(latest) }
            return state.next
        }
    }

    func unsubscribe(_ token: Int) {
        _ = state.withLock { $0.sinks.removeValue(forKey: token) }
    }

    /// One `data:` message: a `data:` line per line of `text`, and the empty line that ends it.
    public static func message(data text: String) -> [UInt8] {
        var message: [UInt8] = []
        // Bytes, not characters: "\r\n" is one Character, and a CR alone would end a line too.
        for line in Array(text.utf8).split(separator: .lf, omittingEmptySubsequences: false) {
            message += Array("data: ".utf8) + line.filter { $0 != .cr } + [.lf]
        }
        return message + [.lf]
    }
}
