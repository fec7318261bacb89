import CcTalk
import VendHardware
import VendPOSIX
import VendSerial

/// ccTalk over a byte stream: flush, send, verify our echo when the bus returns it, then collect
/// the reply until its deadline. Runs on the driver thread.
final class StreamBus: CcTalkBus {
    private let stream: ByteStream
    private let addressing: CcTalkAddressing
    private let echo: Bool

    init(stream: ByteStream, addressing: CcTalkAddressing, echo: Bool) {
        self.stream = stream
        self.addressing = addressing
        self.echo = echo
    }

    func exchange(_ header: Header, _ data: [UInt8], timeout: Duration) -> Result<[UInt8], BusFailure> {
        let request = addressing.request(header, data)
        // Part 1 §11.1: nothing left over from an earlier exchange may be taken for this reply.
        stream.discardInput()
        do {
            try stream.write(request)
        } catch {
            return .failure(.disconnected(error))
        }
        var receiver = addressing.receiver()
        let deadline = MonotonicClock.now + timeout
        var pending: [UInt8] = []
        if echo {
            // Our own bytes come back first on a single-wire bus: about 1 ms each at 9600 baud.
            let echoDeadline = MonotonicClock.now + .milliseconds(50 + 2 * request.count)
            while pending.count < request.count {
                switch read(until: echoDeadline) {
                case .bytes(let bytes): pending += bytes
                case .timedOut: return .failure(.echoMismatch(sent: request, heard: pending))
                case .failed(let error): return .failure(.disconnected(error))
                }
            }
            guard Array(pending.prefix(request.count)) == request else {
                // A clean reply where the echo should be: the interface does not echo at all.
                let replyInstead = !receiver.receive(pending, at: MonotonicClock.nanoseconds).isEmpty
                return .failure(.echoMismatch(sent: request, heard: replyInstead ? [] : Array(pending.prefix(request.count))))
            }
            pending.removeFirst(request.count)
        }
        var frames = receiver.receive(pending, at: MonotonicClock.nanoseconds)
        while frames.isEmpty {
            switch read(until: deadline) {
            case .bytes(let bytes): frames = receiver.receive(bytes, at: MonotonicClock.nanoseconds)
            case .timedOut: return .failure(.noReply(discardedBytes: receiver.discarded + (receiver.isIdle ? 0 : 1)))
            case .failed(let error): return .failure(.disconnected(error))
            }
        }
        return addressing.check(frames[0])
    }

    private enum Read { case bytes([UInt8]), timedOut, failed(LinkError) }

    /// Waits on the stream alone: an exchange is short, and a wake-up meant for the driver loop
    /// stays pending in its `Waiter` until the loop sleeps again.
    private func read(until deadline: ContinuousClock.Instant) -> Read {
        while true {
            let left = deadline - MonotonicClock.now
            guard left > .zero else { return .timedOut }
            switch Waiter.waitReadable(stream.fileDescriptor, timeout: left) {
            case .readable, .hangUp:
                do {
                    let bytes = try stream.readAvailable()
                    if !bytes.isEmpty { return .bytes(bytes) }
                } catch {
                    return .failed(error)
                }
            case .woken, .timedOut:
                return .timedOut
            }
        }
    }
}
