import CMicroHTTPDShim
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The fleet page's live updates: server-sent events (`text/event-stream`) on `/events`, one
/// `change` event naming the machines each time the store commits something of theirs. The
/// page's script (`/office.js`) then fetches the page again and swaps its tables. At most
/// `maxStreams` streams; each ends after `lifetime` (the browser reconnects, and its session is
/// checked again), and a comment line every `heartbeat` finds the clients that went away.
public final class LiveFeed: Sendable {
    /// A stream's pointer, owned by libmicrohttpd: used only under `streams`' lock, which its
    /// `closed` callback takes before the stream is freed.
    private struct Stream: @unchecked Sendable {
        let pointer: OpaquePointer
        let opened: Int64
    }

    public static let maxStreams = 64
    static let lifetime: Int64 = 300_000
    static let heartbeat = Duration.seconds(15)
    /// What may wait for a client that does not read before its stream is closed.
    static let maxPending = 64 * 1024
    /// Machines named in one event at most; beyond, `*` (all).
    static let maxNamed = 100

    private let streams = Mutex<[UInt: Stream]>([:])
    /// Set by `endAll()`: no stream opens after it.
    private let closing = Atomic<Bool>(false)
    private let clock: @Sendable () -> Int64

    public init(clock: @escaping @Sendable () -> Int64) { self.clock = clock }

    public var count: Int { streams.withLock { $0.count } }

    /// Answers `request` with a new stream; false when `maxStreams` are open (or libmicrohttpd
    /// could not queue it). On libmicrohttpd's thread, the only one that opens and closes streams:
    /// the stream is made outside the lock, since a failed one is closed at once.
    func open(_ request: OpaquePointer, headers: [(String, String)]) -> Bool {
        guard count < Self.maxStreams, !closing.load(ordering: .acquiring) else { return false }
        let texts = headers.flatMap { [$0.0, $0.1] }
        var pointers: [UnsafeMutablePointer<CChar>?] = texts.map { strdup($0) }
        defer { for pointer in pointers { free(pointer) } }
        let stream = pointers.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { headers in
                vhttp_respond_stream(
                    request, headers.baseAddress, headers.count, Self.maxPending,
                    { context, stream in
                        guard let context, let stream else { return }
                        Unmanaged<LiveFeed>.fromOpaque(context).takeUnretainedValue().closed(stream)
                    }, Unmanaged.passUnretained(self).toOpaque())
            }
        }
        guard let stream else { return false }
        streams.withLock { streams in
            streams[UInt(bitPattern: stream)] = Stream(pointer: stream, opened: clock())
            // The browser waits 2 s before it reconnects after an end.
            send("retry: 2000\n\n", to: stream)
        }
        return true
    }

    /// The store committed events or retained messages of `machines`.
    public func changed(_ machines: Set<String>) {
        guard !machines.isEmpty else { return }
        // Machine ids are topic levels: no line breaks; sorted, so that an event reads the same.
        let named = machines.count > Self.maxNamed ? "*" : machines.sorted().joined(separator: " ")
        let event = "event: change\ndata: \(named)\n\n"
        streams.withLock { streams in
            for stream in streams.values { send(event, to: stream.pointer) }
        }
    }

    /// A comment to every stream, and the end of those past their lifetime.
    func beat() {
        let now = clock()
        return streams.withLock { streams in
            for stream in streams.values {
                if now - stream.opened >= Self.lifetime {
                    vhttp_stream_end(stream.pointer)
                } else {
                    send(": alive\n\n", to: stream.pointer)
                }
            }
        }
    }

    /// Ends every stream and refuses new ones: libmicrohttpd must not be stopped while a
    /// connection is suspended, and an ended stream never suspends again.
    func endAll() {
        closing.store(true, ordering: .releasing)
        streams.withLock { streams in
            for stream in streams.values { vhttp_stream_end(stream.pointer) }
        }
    }

    /// Under the lock. A stream whose client stopped reading is closed by the shim.
    private func send(_ text: String, to stream: OpaquePointer) {
        var bytes = Array(text.utf8)
        _ = vhttp_stream_send(stream, &bytes, bytes.count)
    }

    private func closed(_ stream: OpaquePointer) {
        _ = streams.withLock { $0.removeValue(forKey: UInt(bitPattern: stream)) }
    }
}
