import Foundation
import VendPOSIX

/// A European route driver's handheld (or an optical head) speaking Enhanced DDCMP as the
/// master, written from EVA-DTS 6.1.1 chapter 3 and its application notes (§6.2.1) with its own
/// framing, not VendDEX's: START/STACK, Who Are You, Read Data of a list, the `99` blocks each
/// acknowledged, Finish. Faults on demand: noise, missed STACKs, a corrupt command, NACKed or
/// unanswered blocks, the cable pulled at any stage. It listens on a Unix socket, the machine
/// connects.
public final class DDCMPMaster: Sendable {
    public enum Stage: String, CaseIterable, Sendable {
        case afterStart = "after the STACK"
        case afterWhoAreYou = "after Who Are You"
        case inData = "after the first block, unacknowledged"
        case beforeLastAck = "with the last block received, unacknowledged"
        case beforeFinish = "after acknowledging the last block, before Finish"
        case afterFinish = "after sending Finish"
    }

    public struct Faults: Sendable {
        public var pullAt: Stage?
        /// Bytes sent before the first START: an optical head's noise.
        public var noiseFirst: [UInt8] = []
        /// How many STACKs the master does not hear (it sends START again after 250 ms).
        public var missedStacks = 0
        /// How many times Read Data goes out with a wrong data CRC before a good one.
        public var corruptReads = 0
        /// Block number (from 1) → how many times it is NACKed.
        public var nackBlock: [Int: Int] = [:]
        /// This block is met with silence once (the machine must send it again).
        public var silentOnBlock: Int?

        public init() {}
    }

    public enum Outcome: Equatable, Sendable {
        /// The whole audit, and the machine acknowledged Finish.
        case audit(String)
        /// The machine answered a command with its rejected response (88 Ex 00).
        case rejected(command: UInt8)
        case pulled(Stage)
        case failed(String)
    }

    /// The station address the master calls: 01, point to point, which every slave answers.
    public let address: UInt8
    /// S2 S1 P2 P1 of Who Are You: zero by default (§3.6.4.1.1 note 4).
    public let securityCode: [UInt8]
    private let socket: HandheldSocket

    public init(
        socketPath: String, address: UInt8 = 0x01, securityCode: [UInt8] = [0, 0, 0, 0], report: @escaping @Sendable (String) -> Void = { _ in }
    ) throws {
        self.address = address
        self.securityCode = securityCode
        socket = try HandheldSocket(socketPath: socketPath, threadName: "ddcmp-master", report: report)
    }

    public var transcript: [String] { socket.transcript }
    /// How long the machine waited before each message, as measured at this end.
    public var gaps: [TimingGap] { socket.gaps }
    public func waitForMachine(timeout: Duration = .seconds(10)) -> Bool { socket.waitForMachine(timeout: timeout) }
    public func replug() throws { try socket.replug() }

    /// The master is taken off the jack between sessions (another handheld goes on).
    public func unplug() { socket.pull() }

    // MARK: - What a route driver does

    /// Reads `list` (1: the audit collection, 2: the security read) and finishes (§6.2.1.2).
    public func read(list: UInt8 = 1, _ faults: Faults = Faults()) -> Outcome {
        session { talk in
            if let stop = talk.link(faults) { return stop }
            if let stop = pull(.afterStart, faults) { return stop }
            if let stop = talk.whoAreYou() { return stop }
            if let stop = pull(.afterWhoAreYou, faults) { return stop }
            let read: [UInt8] = [0x77, 0xE2, 0x00, list, 0x01, 0x00, 0x00, 0x00, 0x00]
            for _ in 0..<faults.corruptReads {
                talk.sendData(read, note: "Read Data, data CRC wrong", corrupt: true)
                guard case .control(0x02, _)? = talk.hear() else { return .failed("a Read Data with a wrong CRC was not NACKed") }
                talk.sent &-= 1
            }
            guard let answer = talk.command(read, note: "Read Data list \(list)") else { return .failed("no answer to Read Data") }
            guard answer.count >= 3, answer[0] == 0x88, answer[1] == 0xE2 else { return .failed("Read Data answered \(answer.prefix(3))") }
            guard answer[2] == 0x01, answer.count >= 9 else { return .rejected(command: 0xE2) }
            let length = Int(answer[7]) | Int(answer[8]) << 8
            talk.acknowledge()
            var text: [UInt8] = [], blocks = 0
            var nacks = faults.nackBlock, silent = faults.silentOnBlock
            while true {
                guard case .data(let last, let data)? = talk.hear(within: .seconds(3)) else {
                    return .failed("block \(blocks + 1) did not come")
                }
                guard data.count >= 2, data[0] == 0x99, Int(data[1]) == blocks % 256 else {
                    return .failed("block \(blocks + 1) came as \(data.prefix(2))")
                }
                let number = blocks + 1
                if let left = nacks[number], left > 0 {
                    nacks[number] = left - 1
                    talk.received &-= 1
                    talk.sendControl(0x02, number: talk.received, reason: 0x02, note: "NACK block \(number) (fault)")
                    continue
                }
                if silent == number {
                    silent = nil
                    talk.received &-= 1
                    continue
                }
                blocks = number
                text += data.dropFirst(2)
                if number == 1, let stop = pull(.inData, faults) { return stop }
                if last, let stop = pull(.beforeLastAck, faults) { return stop }
                talk.acknowledge()
                if last { break }
            }
            guard length == 0xFFFF || length == text.count else { return .failed("\(text.count) bytes read, \(length) announced") }
            if let stop = pull(.beforeFinish, faults) { return stop }
            talk.sendData([0x77, 0xFF], note: "Finish")
            if let stop = pull(.afterFinish, faults) { return stop }
            guard case .control(0x01, talk.sent)? = talk.hear() else { return .failed("Finish was not acknowledged") }
            return .audit(String(decoding: text, as: UTF8.self))
        }
    }

    /// Sends a Write Data of `list` (a configuration): vendd rejects it and the master finishes.
    public func write(list: UInt8 = 64) -> Outcome {
        session { talk in
            if let stop = talk.link(Faults()) { return stop }
            if let stop = talk.whoAreYou() { return stop }
            guard let answer = talk.command([0x77, 0xE3, 0x00, list, 0x10, 0x00], note: "Write Data list \(list)") else {
                return .failed("no answer to Write Data")
            }
            talk.acknowledge()
            talk.sendData([0x77, 0xFF], note: "Finish")
            guard case .control(0x01, talk.sent)? = talk.hear() else { return .failed("Finish was not acknowledged") }
            return answer.count >= 3 && answer[0] == 0x88 && answer[2] == 0x00
                ? .rejected(command: answer[1]) : .failed("Write Data answered \(answer)")
        }
    }

    private func session(_ body: (Talk) -> Outcome) -> Outcome {
        socket.session { line in body(Talk(line: line, address: address, securityCode: securityCode)) } ?? .failed("no machine connected")
    }

    private func pull(_ stage: Stage, _ faults: Faults) -> Outcome? {
        guard faults.pullAt == stage else { return nil }
        socket.pull()
        return .pulled(stage)
    }
}

/// One session's messages, framed by the handheld itself: every message a 6-byte header and its
/// CRC-16 (low byte first), a data message then its data and a CRC-16 over the data (§3.4.5,
/// §3.6.2, §3.6.3); numbers kept as §3.5.1.2 says.
private final class Talk {
    enum Heard: Equatable {
        case control(UInt8, UInt8)
        /// The select flag (last block) and the data.
        case data(Bool, [UInt8])
    }

    let line: HandheldLine
    let address: UInt8
    let securityCode: [UInt8]
    /// The number of the master's last data message, and of the machine's last one received.
    var sent: UInt8 = 0
    var received: UInt8 = 0
    /// §3.7.3: the receiver waits at least 40 ms before it answers.
    let turnaround: useconds_t = 40_000

    init(line: HandheldLine, address: UInt8, securityCode: [UInt8]) {
        self.securityCode = securityCode
        self.line = line
        self.address = address
    }

    static func withCRC(_ bytes: [UInt8]) -> [UInt8] {
        let crc = Wire.crc(bytes)
        return bytes + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }

    /// START up to 10 times, 250 ms apart, until a STACK (§3.7.1).
    func link(_ faults: DDCMPMaster.Faults) -> DDCMPMaster.Outcome? {
        if !faults.noiseFirst.isEmpty { line.send(faults.noiseFirst, note: "noise \(faults.noiseFirst.count) bytes", turnaround: 0) }
        var missed = faults.missedStacks
        for _ in 0..<10 {
            sendControl(0x06, number: 0, reason: 0, note: "START")
            let heard = hear(within: .milliseconds(250))
            guard case .control(0x07, _)? = heard else { continue }
            if missed > 0 {
                missed -= 1
                continue
            }
            sent = 0
            received = 0
            return nil
        }
        return .failed("no STACK after 10 STARTs")
    }

    func whoAreYou() -> DDCMPMaster.Outcome? {
        // The codes, 26 Nov 2026 17:30:00 in BCD, user "RP", route person (§3.6.4.1.1).
        let way: [UInt8] = [0x77, 0xE0, 0x00] + securityCode + [0x26, 0x11, 0x26, 0x17, 0x30, 0x00, UInt8(ascii: "R"), UInt8(ascii: "P"), 0x0C]
        guard let answer = command(way, note: "Who Are You") else { return .failed("no answer to Who Are You") }
        // 88 E0 00 01: "Denial Code = 01 - Security or Pass Codes do not match" (p.82).
        if answer.count >= 4, answer[0] == 0x88, answer[1] == 0xE0, answer[2] == 0x00 {
            acknowledge()
            return .rejected(command: 0xE0)
        }
        guard answer.count >= 21, answer[0] == 0x88, answer[1] == 0xE0, answer[2] == 0x01 else {
            return .failed("Who Are You answered \(answer.prefix(3))")
        }
        acknowledge()
        return nil
    }

    /// Sends a command, waits for its ACK and the machine's response; the response's data.
    func command(_ data: [UInt8], note: String) -> [UInt8]? {
        sendData(data, note: note)
        guard case .control(0x01, sent)? = hear() else { return nil }
        guard case .data(_, let answer)? = hear() else { return nil }
        return answer
    }

    func acknowledge() { sendControl(0x01, number: received, reason: 0, note: "ACK \(received)") }

    func sendControl(_ type: UInt8, number: UInt8, reason: UInt8, note: String) {
        line.send(Self.withCRC([0x05, type, 0x40 | reason, number, 0x00, address]), note: note, turnaround: turnaround)
    }

    func sendData(_ data: [UInt8], note: String, corrupt: Bool = false) {
        sent &+= 1
        let header = Self.withCRC([0x81, UInt8(data.count & 0xFF), 0x40 | UInt8(data.count >> 8), received, sent, address])
        var body = Self.withCRC(data)
        if corrupt { body[body.count - 1] ^= 0x5A }
        line.send(header + body, note: note, turnaround: turnaround)
    }

    /// The machine's next message within `timeout` (the 170 ms ACK time-out, with room for a
    /// busy test machine); its characters may not be more than 65 ms apart.
    func hear(within timeout: Duration = .milliseconds(500)) -> Heard? {
        let fresh = line.listen()
        var header: [UInt8] = []
        while header.count < 8 {
            guard let byte = line.byte(within: header.isEmpty ? timeout : .milliseconds(65)) else { return nil }
            if header.isEmpty, byte != 0x05, byte != 0x81 { continue }
            header.append(byte)
            if header.count == 8, Self.withCRC(Array(header.prefix(6))) != header {
                // Not a message after all: look again from the next byte (§3.5.2.2).
                header.removeFirst()
                while let first = header.first, first != 0x05, first != 0x81 { header.removeFirst() }
            }
        }
        if header[0] == 0x05 {
            line.transcript.append("machine → control \(String(header[1], radix: 16)) number \(header[3])")
            line.record("control \(String(header[1], radix: 16))", fresh: fresh)
            return .control(header[1], header[3])
        }
        let length = Int(header[1]) | Int(header[2] & 0x3F) << 8
        var body: [UInt8] = []
        while body.count < length + 2 {
            guard let byte = line.byte(within: .milliseconds(65)) else { return nil }
            body.append(byte)
        }
        guard Self.withCRC(Array(body.prefix(length))) == body else {
            line.transcript.append("machine → data message \(header[4]) with a wrong CRC")
            return nil
        }
        received = header[4]
        line.transcript.append("machine → data message \(header[4]), \(length) bytes\(header[2] & 0x80 != 0 ? ", last" : "")")
        line.record("data message \(header[4])", fresh: fresh)
        return .data(header[2] & 0x80 != 0, Array(body.prefix(length)))
    }
}
