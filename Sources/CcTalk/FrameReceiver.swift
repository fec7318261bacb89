/// Assembles packets from bytes as they arrive. Part 1 §11.1: a gap of more than 50 ms between
/// bytes abandons the packet in progress, so line noise never hangs around in the buffer. Bytes
/// that cannot start a packet for `destination`, and packets whose checksum fails, are skipped,
/// so a reply that follows garbage or our own echo without a pause is still found.
public struct FrameReceiver: Sendable {
    public static let interByteTimeoutNanoseconds: UInt64 = 50_000_000

    public let checksum: FrameChecksum
    /// Only packets to this address are wanted (nil: any).
    public let destination: UInt8?
    private var buffer: [UInt8] = []
    private var lastByteAt: UInt64?
    /// Bytes thrown away since the last call to `takeDiscarded()`, for diagnostics.
    public private(set) var discarded = 0

    public init(checksum: FrameChecksum, destination: UInt8?) {
        self.checksum = checksum
        self.destination = destination
    }

    public var isIdle: Bool { buffer.isEmpty }

    /// Feeds bytes received at `now` (monotonic nanoseconds); returns the packets they complete.
    public mutating func receive(_ bytes: some Sequence<UInt8>, at now: UInt64) -> [Frame] {
        if let last = lastByteAt, now &- last > Self.interByteTimeoutNanoseconds, !buffer.isEmpty {
            discarded += buffer.count
            buffer.removeAll()
        }
        var frames: [Frame] = []
        for byte in bytes {
            lastByteAt = now
            buffer.append(byte)
            while let frame = extract() { frames.append(frame) }
        }
        return frames
    }

    /// Forgets a partial packet (before sending a new command).
    public mutating func reset() {
        discarded += buffer.count
        buffer.removeAll()
    }

    public mutating func takeDiscarded() -> Int {
        defer { discarded = 0 }
        return discarded
    }

    /// The earliest valid packet in the buffer. A start byte followed by a large length (an echo,
    /// noise) must not hold back a complete reply behind it, so every candidate start is tried.
    private mutating func extract() -> Frame? {
        var firstIncomplete: Int?
        for start in buffer.indices where destination == nil || buffer[start] == destination {
            guard start + 1 < buffer.count else {
                firstIncomplete = firstIncomplete ?? start
                break
            }
            let length = Frame.wireLength(dataLength: buffer[start + 1])
            guard start + length <= buffer.count else {
                firstIncomplete = firstIncomplete ?? start
                continue
            }
            if let frame = Frame.decode(Array(buffer[start..<(start + length)]), checksum) {
                drop(start)
                buffer.removeFirst(length)
                return frame
            }
        }
        // Nothing complete: keep what may still become a packet.
        drop(firstIncomplete ?? buffer.count)
        return nil
    }

    private mutating func drop(_ count: Int) {
        buffer.removeFirst(count)
        discarded += count
    }
}
