import VendTime

/// One client of a `PollServer`: its descriptor, what it sent that its protocol has not taken
/// yet, what waits to be written to it, and where it is in its life. Only the server's thread
/// touches it; the protocol changes it from the server delegate's calls.
public final class PollConnection {
    public enum Phase: Sendable, Equatable {
        /// Waiting for a request, or for the rest of one.
        case reading
        /// Its request is being answered elsewhere: input is buffered, no deadline runs.
        case busy
        /// Only written to (event lines): what the client sends is dropped, no idle deadline.
        case streaming
        /// Writing its last bytes; then its input is drained until it closes or lingers too long.
        case closing
    }

    private struct Message {
        var bytes: [UInt8]
        /// At most this many droppable messages wait unsent; the oldest give way.
        var keepingAtMost: Int?
    }

    /// Unique in its server for the server's life (a descriptor is reused at once).
    public let id: Int
    public let descriptor: Int32
    public let connectedAt: ContinuousClock.Instant
    public internal(set) var phase = Phase.reading
    /// Received and not yet consumed, at most about `Limits.inputBytes`.
    public internal(set) var input: [UInt8] = []
    /// The client closed its side.
    public internal(set) var inputEnded = false
    /// The last byte read or written.
    public internal(set) var lastActivity: ContinuousClock.Instant
    public internal(set) var lastWrite: ContinuousClock.Instant
    /// When set, the delegate's `alarm` is called at this instant (once; set it again to repeat).
    public var alarm: ContinuousClock.Instant?

    private let timekeeper: any Timekeeper
    private var output: [Message] = []
    /// Bytes of `output`'s first message already written.
    private var written = 0
    private(set) var outputBytes = 0
    /// The first byte of the request under way (nil: none under way).
    var requestStartedAt: ContinuousClock.Instant?
    /// Since when output has waited without a byte taken.
    var stalledSince: ContinuousClock.Instant?
    /// After the last byte of a closing connection: its input is drained until then.
    var lingerUntil: ContinuousClock.Instant?
    /// New input, or output just emptied with input waiting: the delegate should look.
    var needsParse = false

    init(id: Int, descriptor: Int32, at now: ContinuousClock.Instant, timekeeper: any Timekeeper) {
        self.id = id
        self.descriptor = descriptor
        self.timekeeper = timekeeper
        connectedAt = now
        lastActivity = now
        lastWrite = now
    }

    public var hasOutput: Bool { !output.isEmpty }

    /// May be hung up for a newcomer: waiting for a request or the rest of one (half a request
    /// is no claim to a place) with nothing left to write, or closing.
    var isEvictable: Bool {
        switch phase {
        case .reading: !hasOutput
        case .closing: true
        case .busy, .streaming: false
        }
    }

    // MARK: For the protocol

    /// The protocol took `count` bytes of input (a request); the next request's time starts now.
    public func consume(_ count: Int) {
        input.removeFirst(count)
        requestStartedAt = input.isEmpty ? nil : timekeeper.now
    }

    /// Queues `bytes` to be written in order after what is queued.
    public func send(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        output.append(Message(bytes: bytes))
        outputBytes += bytes.count
    }

    /// Queues `bytes` as a message a newer one may replace: when more than `count` such messages
    /// wait unsent, the oldest are dropped (a slow reader gets the latest state, never a backlog).
    /// Returns how many were dropped.
    @discardableResult
    public func send(_ bytes: [UInt8], keepingAtMost count: Int) -> Int {
        output.append(Message(bytes: bytes, keepingAtMost: count))
        outputBytes += bytes.count
        // The first message may be half written: it stays.
        let droppable = output.indices.dropFirst(written > 0 ? 1 : 0).filter { output[$0].keepingAtMost != nil }
        let excess = droppable.dropLast(count)
        for index in excess.reversed() {
            outputBytes -= output[index].bytes.count
            output.remove(at: index)
        }
        return excess.count
    }

    /// Its request is answered elsewhere (another thread): no deadline, input kept for later.
    public func hold() {
        phase = .busy
    }

    /// Waits for the next request again; one already in the input is looked at at once.
    public func resume() {
        phase = .reading
        requestStartedAt = input.isEmpty ? nil : timekeeper.now
        needsParse = !input.isEmpty
    }

    /// From now on only written to; what the client sends is dropped.
    public func stream() {
        phase = .streaming
        input.removeAll()
        requestStartedAt = nil
    }

    /// Writes what is queued, then closes: the client sees the end of the stream, and what it
    /// still sends is drained (so it reads the last answer rather than a reset) until it closes
    /// or `Limits.lingerTimeout` passes.
    public func close() {
        phase = .closing
        input.removeAll()
        requestStartedAt = nil
    }

    // MARK: For the server

    /// Appends received bytes; the request's time starts with its first byte.
    func received(_ bytes: ArraySlice<UInt8>, at now: ContinuousClock.Instant) {
        lastActivity = now
        guard phase == .reading || phase == .busy else { return }
        if input.isEmpty { requestStartedAt = now }
        input += bytes
        if phase == .reading { needsParse = true }
    }

    func endOfInput() {
        inputEnded = true
        if phase == .reading { needsParse = true }
    }

    /// Writes what the socket takes now through `send` (bytes, from offset), which returns the
    /// count written, 0 when the socket takes nothing now, -1 when the connection failed. False
    /// when it failed.
    func write(at now: ContinuousClock.Instant, _ send: ([UInt8], Int) -> Int) -> Bool {
        var progressed = false
        while let first = output.first {
            let sent = send(first.bytes, written)
            if sent < 0 { return false }
            if sent == 0 { break }
            progressed = true
            written += sent
            outputBytes -= sent
            if written == first.bytes.count {
                output.removeFirst()
                written = 0
            }
        }
        if progressed {
            lastActivity = now
            lastWrite = now
            stalledSince = nil
        }
        if hasOutput {
            if stalledSince == nil { stalledSince = now }
            return true
        }
        stalledSince = nil
        if phase == .reading && !input.isEmpty {
            // The next request's time starts now that the server looks at it.
            requestStartedAt = now
            needsParse = true
        }
        return true
    }
}
