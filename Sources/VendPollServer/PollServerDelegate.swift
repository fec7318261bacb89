/// The protocol a `PollServer` serves: framing and parsing only. Every call is made on the
/// server's thread, one at a time; a delegate answers by changing the connection (`consume`,
/// `send`, `hold`, `stream`, `close`).
public protocol PollServerDelegate: AnyObject {
    /// A client was admitted.
    func opened(_ connection: PollConnection, on server: PollServer)
    /// The connection is reading, has nothing left to write, and has input that may hold a
    /// request. A connection whose client closed its side (`inputEnded`) and that is left
    /// reading is closed.
    func received(_ connection: PollConnection, on server: PollServer)
    /// A request was not complete within `Limits.requestTimeout` of its first byte: the last
    /// word to queue before the connection closes.
    func requestTimedOut(_ connection: PollConnection, on server: PollServer)
    /// The connection's `alarm` came.
    func alarm(_ connection: PollConnection, on server: PollServer)
    /// The connection is gone (its descriptor closed).
    func closed(_ connection: PollConnection, on server: PollServer)
    /// What a client refused at the door is told, in one write, before it is hung up.
    func refusal(_ reason: PollServer.Refusal, on server: PollServer) -> [UInt8]
    /// At every turn, before any I/O: hand over what other threads left for the connections.
    func collect(on server: PollServer)
    /// Something to log or count.
    func report(_ event: PollServer.Event, on server: PollServer)
}

extension PollServerDelegate {
    /// A protocol that sets no alarm.
    public func alarm(_ connection: PollConnection, on server: PollServer) {}
}
