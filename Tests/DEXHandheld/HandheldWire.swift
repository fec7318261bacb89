import Foundation
import VendPOSIX

/// The handheld's own reading of EVA-DTS 6.1.1 §4.4, kept apart from vendd's VendDEX on
/// purpose: a simulator that shared the machine's framing and CRC would agree with its bugs.
enum Wire {
    static let soh: UInt8 = 0x01, stx: UInt8 = 0x02, etx: UInt8 = 0x03, eot: UInt8 = 0x04, enq: UInt8 = 0x05
    static let dle: UInt8 = 0x10, nak: UInt8 = 0x15, syn: UInt8 = 0x16, etb: UInt8 = 0x17

    /// x¹⁶+x¹⁵+x²+1, reflected, from 0, bit by bit as the specification's listing does it.
    static func crc(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            var data = UInt16(byte)
            for _ in 0..<8 {
                let mix = (crc ^ data) & 1
                crc >>= 1
                if mix == 1 { crc ^= 0xA001 }
                data >>= 1
            }
        }
        return crc
    }

    /// DLE SOH|STX, the text, DLE ETB|ETX, CRC low then high, over the text and ETB/ETX.
    static func frame(_ text: [UInt8], start: UInt8, last: Bool, corruptCRC: Bool = false) -> [UInt8] {
        let end = last ? etx : etb
        var check = crc(text + [end])
        if corruptCRC { check ^= 0x5A5A }
        return [dle, start] + text + [dle, end, UInt8(check & 0xFF), UInt8(check >> 8)]
    }

    /// What the machine said, read from the socket.
    enum Heard: Equatable {
        case enq, eot, nak, ack0, ack1, wack
        case block(text: [UInt8], start: UInt8, last: Bool, crcGood: Bool)
        case other(UInt8)
        case silence
        case closed
    }
}

/// One connection's byte stream, read with deadlines (real time: this is the far end of a cable).
final class HandheldLine: @unchecked Sendable {
    // @unchecked: used by one script at a time, under the handheld's script lock.
    let socket: UnixSocket
    private var pending: [UInt8] = []
    var transcript: [String] = []
    /// How long after the line's last event (what the handheld sent, or what it last heard)
    /// each thing the machine said began: the machine's turnaround and pauses, as measured here.
    var gaps: [TimingGap] = []
    private var last: (what: String, at: ContinuousClock.Instant)?
    /// When the first byte of what is being heard came off the socket.
    private var arrival: ContinuousClock.Instant?
    /// When the latest bytes came off the socket.
    private var lastChunkAt: ContinuousClock.Instant?

    init(socket: UnixSocket) { self.socket = socket }

    /// Sends after the turnaround: DEX/UCS's ≥ 10 ms before answering (§4.5.8) unless told.
    func send(_ bytes: [UInt8], note: String, turnaround: useconds_t = 10_000) {
        transcript.append("handheld → \(note)")
        usleep(turnaround)
        // Timed before the write: a thread preempted between the write and a clock read after it
        // would see the machine answer early (CI, under load: 8.85 ms) when it had not.
        let sentAt = ContinuousClock.now
        _ = bytes.withUnsafeBytes { Foundation.send(socket.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        last = ("handheld " + note, sentAt)
    }

    /// The next thing the machine says within `timeout`; a block must come with no gap over
    /// 100 ms between its characters (Timer B).
    func hear(within timeout: Duration) -> Wire.Heard {
        let fresh = listen()
        guard let first = byte(within: timeout) else { return pending.isEmpty && closed ? .closed : .silence }
        let heard: Wire.Heard
        switch first {
        case Wire.enq: heard = .enq
        case Wire.eot: heard = .eot
        case Wire.nak: heard = .nak
        case Wire.dle:
            switch byte(within: .milliseconds(100)) {
            case UInt8(ascii: "0"): heard = .ack0
            case UInt8(ascii: "1"): heard = .ack1
            case UInt8(ascii: ";"): heard = .wack
            case let start? where start == Wire.soh || start == Wire.stx: heard = block(start: start)
            case let other?: heard = .other(other)
            case nil: heard = .silence
            }
        default: heard = .other(first)
        }
        transcript.append("machine → \(Self.describe(heard))")
        record(Self.describe(heard), fresh: fresh)
        return heard
    }

    /// Starts listening for the machine's next message; true when nothing of it is here yet, so
    /// its first byte's arrival can be timed.
    func listen() -> Bool {
        arrival = nil
        return pending.isEmpty
    }

    /// The machine said `what`: the gap since the line's last event is kept if it was timed.
    func record(_ what: String, fresh: Bool) {
        if fresh, let arrival, let last { gaps.append(TimingGap(after: last.what, heard: what, gap: arrival - last.at)) }
        // From when its last bytes came off the socket, not from after they were decoded.
        last = ("machine " + what, lastChunkAt ?? ContinuousClock.now)
    }

    private func block(start: UInt8) -> Wire.Heard {
        var text: [UInt8] = []
        while let next = byte(within: .milliseconds(100)) {
            if next != Wire.dle {
                text.append(next)
                continue
            }
            guard let after = byte(within: .milliseconds(100)) else { break }
            if after == Wire.syn { continue }
            if after == Wire.dle {
                text.append(after)
                continue
            }
            guard after == Wire.etb || after == Wire.etx, let low = byte(within: .milliseconds(100)),
                let high = byte(within: .milliseconds(100))
            else { break }
            let good = UInt16(high) << 8 | UInt16(low) == Wire.crc(text + [after])
            return .block(text: text, start: start, last: after == Wire.etx, crcGood: good)
        }
        return .block(text: text, start: start, last: false, crcGood: false)
    }

    private(set) var closed = false

    /// The next byte within `timeout`; nil on silence or when the machine hung up.
    func byte(within timeout: Duration) -> UInt8? {
        if pending.isEmpty {
            var descriptor = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            guard poll(&descriptor, 1, milliseconds) > 0 else { return nil }
            let now = ContinuousClock.now
            if arrival == nil { arrival = now }
            lastChunkAt = now
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = recv(socket.descriptor, &buffer, buffer.count, 0)
            guard count > 0 else {
                closed = true
                return nil
            }
            pending = Array(buffer[0..<count])
        }
        return pending.removeFirst()
    }

    static func describe(_ heard: Wire.Heard) -> String {
        switch heard {
        case .enq: "ENQ"
        case .eot: "EOT"
        case .nak: "NAK"
        case .ack0: "DLE 0 (ACK0)"
        case .ack1: "DLE 1 (ACK1)"
        case .wack: "DLE ; (WACK)"
        case .block(let text, let start, let last, let good):
            "DLE \(start == Wire.soh ? "SOH" : "STX") \(text.count) bytes DLE \(last ? "ETX" : "ETB") CRC \(good ? "good" : "BAD")"
                + (start == Wire.soh ? " \"\(String(decoding: text, as: UTF8.self))\"" : "")
        case .other(let byte): "stray byte 0x\(String(byte, radix: 16))"
        case .silence: "(silence)"
        case .closed: "(cable gone)"
        }
    }
}

/// One measured wait of the machine's: after `after` (the handheld's transmission, or what the
/// machine last said), `heard` began `gap` later.
public struct TimingGap: Sendable, Equatable, CustomStringConvertible {
    public let after: String
    public let heard: String
    public let gap: Duration

    public var description: String { "\(heard) \(gap) after \(after)" }
}
