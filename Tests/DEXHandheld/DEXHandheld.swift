import Foundation
import VendPOSIX

/// A route driver's handheld (or a telemeter) on the far end of the DEX cable, written from
/// EVA-DTS 6.1.1 chapter 4: it reads the audit, sends a configuration, or waits for the
/// machine to make the first handshake; with faults on demand (bad CRCs, NAKs, silence, WACK,
/// noise, the cable pulled at any stage). It listens on a Unix socket, the machine connects.
public final class DEXHandheld: Sendable {
    /// Where the cable can be pulled.
    public enum Stage: String, CaseIterable, Sendable {
        case afterENQ = "after its ENQ"
        case inFirstHandshake = "halfway through the first handshake"
        case beforeFirstEOT = "before the first handshake's EOT"
        case inSecondHandshake = "after the machine's second-handshake ENQ"
        case beforeData = "before the data transfer"
        case inData = "after the first data block, unacknowledged"
        case beforeLastAck = "with the last block received, unacknowledged"
        case afterLastAck = "after acknowledging the last block"
    }

    public struct Faults: Sendable {
        public var pullAt: Stage?
        /// Bytes sent before the ENQ: line noise from plugging in.
        public var noiseFirst: [UInt8] = []
        /// How many first handshakes go out with a wrong CRC before a good one.
        public var badHandshakeCRCs = 0
        /// Data block number (from 1) → how many times it is NAKed.
        public var nakBlock: [Int: Int] = [:]
        /// This data block is met with silence once (the machine must ask again with ENQ).
        public var silentOnBlock: Int?
        /// This data block is answered WACK once (not ready yet).
        public var wackOnBlock: Int?
        /// How many configuration blocks go out with a wrong CRC before a good one.
        public var badConfigurationCRCs = 0

        public init() {}
    }

    public enum Outcome: Equatable, Sendable {
        /// The whole audit, received and acknowledged.
        case audit(String)
        /// The configuration went out and the machine acknowledged every block.
        case configured
        /// The second handshake answered this code instead of 00.
        case refused(code: String)
        case pulled(Stage)
        case failed(String)
    }

    public let communicationID: String
    public let revision: String
    private let socket: HandheldSocket

    public init(
        socketPath: String, communicationID: String = "HHD0000001", revision: String = "R00L06",
        report: @escaping @Sendable (String) -> Void = { _ in }
    ) throws {
        self.communicationID = communicationID
        self.revision = revision
        socket = try HandheldSocket(socketPath: socketPath, threadName: "dex-handheld", report: report)
    }

    /// Every byte exchanged so far, as the handheld saw it.
    public var transcript: [String] { socket.transcript }
    /// How long the machine waited before each thing it said, as measured at this end.
    public var gaps: [TimingGap] { socket.gaps }

    public func waitForMachine(timeout: Duration = .seconds(10)) -> Bool { socket.waitForMachine(timeout: timeout) }

    public func replug() throws { try socket.replug() }

    /// The handheld is taken off the jack between sessions (another one goes on).
    public func unplug() { socket.pull() }

    // MARK: - What a route driver does

    /// Reads the audit: the handheld makes the first handshake with operation R.
    public func read(_ faults: Faults = Faults()) -> Outcome {
        session(faults) { line in
            if let stop = firstHandshakeAsMaster(operation: "R", line, faults) { return stop }
            if let stop = secondHandshakeAsSlave(line, faults) { return stop }
            return receiveData(line, faults, within: .seconds(3))
        }
    }

    /// Sends a configuration (prices): the first handshake with operation S, then the data.
    public func sendConfiguration(_ text: String, _ faults: Faults = Faults()) -> Outcome {
        session(faults) { line in
            if let stop = firstHandshakeAsMaster(operation: "S", line, faults) { return stop }
            if let stop = secondHandshakeAsSlave(line, faults) { return stop }
            if let stop = pull(.beforeData, faults) { return stop }
            usleep(100_000)
            return sendData(Array(text.utf8), line, faults)
        }
    }

    /// Waits for the machine to make the first handshake, answers OK, then takes the audit.
    public func answerMachine(within timeout: Duration = .seconds(5), _ faults: Faults = Faults()) -> Outcome {
        session(faults) { line in
            guard line.hear(within: timeout) == .enq else { return .failed("the machine did not bid (no ENQ)") }
            line.send([Wire.dle, UInt8(ascii: "0")], note: "ACK0")
            guard case .block(let text, Wire.soh, true, true) = line.hear(within: .seconds(1)), text.count == 17 else {
                return .failed("no readable first handshake from the machine")
            }
            line.send([Wire.dle, UInt8(ascii: "1")], note: "ACK1")
            guard line.hear(within: .seconds(1)) == .eot else { return .failed("no EOT after the first handshake") }
            usleep(100_000)
            line.send([Wire.enq], note: "ENQ")
            guard line.hear(within: .seconds(1)) == .ack0 else { return .failed("no ACK0 for the second handshake") }
            let answer = Array(("00" + communicationID + revision).utf8)
            line.send(Wire.frame(answer, start: Wire.soh, last: true), note: "second handshake 00\(communicationID)\(revision)")
            guard line.hear(within: .seconds(1)) == .ack1 else { return .failed("no ACK1 for the second handshake") }
            line.send([Wire.eot], note: "EOT")
            return receiveData(line, faults, within: .seconds(3))
        }
    }

    // MARK: - Sessions

    private func session(_ faults: Faults, _ body: (HandheldLine) -> Outcome) -> Outcome {
        socket.session(body) ?? .failed("no machine connected")
    }

    private func pull(_ stage: Stage, _ faults: Faults) -> Outcome? {
        guard faults.pullAt == stage else { return nil }
        socket.pull()
        return .pulled(stage)
    }

    private func firstHandshakeAsMaster(operation: Character, _ line: HandheldLine, _ faults: Faults) -> Outcome? {
        if !faults.noiseFirst.isEmpty { line.send(faults.noiseFirst, note: "noise \(faults.noiseFirst.count) bytes") }
        line.send([Wire.enq], note: "ENQ")
        if let stop = pull(.afterENQ, faults) { return stop }
        guard line.hear(within: .seconds(1)) == .ack0 else { return .failed("no ACK0 for the handheld's ENQ") }
        let text = Array((communicationID + String(operation) + revision).utf8)
        for _ in 0..<faults.badHandshakeCRCs {
            line.send(Wire.frame(text, start: Wire.soh, last: true, corruptCRC: true), note: "first handshake, CRC wrong")
            guard line.hear(within: .seconds(1)) == .nak else { return .failed("a first handshake with a wrong CRC was not NAKed") }
        }
        let frame = Wire.frame(text, start: Wire.soh, last: true)
        if faults.pullAt == .inFirstHandshake {
            line.send(Array(frame.prefix(frame.count / 2)), note: "half the first handshake")
            return pull(.inFirstHandshake, faults)
        }
        line.send(frame, note: "first handshake \(String(decoding: text, as: UTF8.self))")
        guard line.hear(within: .seconds(1)) == .ack1 else { return .failed("no ACK1 for the first handshake") }
        if let stop = pull(.beforeFirstEOT, faults) { return stop }
        line.send([Wire.eot], note: "EOT")
        return nil
    }

    private func secondHandshakeAsSlave(_ line: HandheldLine, _ faults: Faults) -> Outcome? {
        guard line.hear(within: .seconds(1)) == .enq else { return .failed("the machine did not start the second handshake") }
        if let stop = pull(.inSecondHandshake, faults) { return stop }
        line.send([Wire.dle, UInt8(ascii: "0")], note: "ACK0")
        guard case .block(let text, Wire.soh, true, true) = line.hear(within: .seconds(1)), text.count == 18 else {
            return .failed("no readable second handshake")
        }
        line.send([Wire.dle, UInt8(ascii: "1")], note: "ACK1")
        guard line.hear(within: .seconds(1)) == .eot else { return .failed("no EOT after the second handshake") }
        // The response code comes before the ID in the format tables, after it in the example.
        let characters = Array(String(decoding: text, as: UTF8.self))
        let codes = [String(characters[0..<2]), String(characters[10..<12])].filter { $0.allSatisfy(\.isNumber) }
        guard let code = codes.first else { return .failed("a second handshake without a response code") }
        return code == "00" ? nil : .refused(code: code)
    }

    /// The machine sends its audit; the handheld acknowledges ACK1, ACK0, … (§4.4).
    private func receiveData(_ line: HandheldLine, _ faults: Faults, within timeout: Duration) -> Outcome {
        if let stop = pull(.beforeData, faults) { return stop }
        guard line.hear(within: timeout) == .enq else { return .failed("the machine did not start the data transfer") }
        var lastReply: [UInt8] = [Wire.dle, UInt8(ascii: "0")]
        line.send(lastReply, note: "ACK0")
        var text: [UInt8] = [], received = 0, hasLast = false
        var naks = faults.nakBlock, silent = faults.silentOnBlock, wack = faults.wackOnBlock
        while true {
            let heard = line.hear(within: .seconds(2))
            switch heard {
            case .enq:
                line.send(lastReply, note: "the last answer again")
            case .block(let payload, Wire.stx, let last, true):
                let number = received + 1
                if let left = naks[number], left > 0 {
                    naks[number] = left - 1
                    line.send([Wire.nak], note: "NAK (fault)")
                    continue
                }
                if silent == number {
                    silent = nil
                    continue
                }
                received = number
                hasLast = last
                text += payload
                if number == 1, let stop = pull(.inData, faults) { return stop }
                if last, let stop = pull(.beforeLastAck, faults) { return stop }
                lastReply = [Wire.dle, number % 2 == 1 ? UInt8(ascii: "1") : UInt8(ascii: "0")]
                if wack == number {
                    wack = nil
                    line.send([Wire.dle, UInt8(ascii: ";")], note: "WACK (fault)")
                    continue
                }
                line.send(lastReply, note: "ACK\(number % 2)")
                if last {
                    if let stop = pull(.afterLastAck, faults) { return stop }
                    guard line.hear(within: .seconds(1)) == .eot else { return .failed("no EOT after the last block") }
                    return .audit(String(decoding: text, as: UTF8.self))
                }
            case .block:
                line.send([Wire.nak], note: "NAK")
            case .eot:
                // A last block answered by WACK was acknowledged in answer to the ENQ after it.
                return hasLast ? .audit(String(decoding: text, as: UTF8.self)) : .failed("the machine ended the transfer (EOT) before its last block")
            case .silence, .closed:
                return .failed("the machine fell silent in the data transfer")
            default:
                continue
            }
        }
    }

    /// The handheld sends its configuration in blocks of at most 200 bytes.
    private func sendData(_ text: [UInt8], _ line: HandheldLine, _ faults: Faults) -> Outcome {
        line.send([Wire.enq], note: "ENQ")
        guard line.hear(within: .seconds(1)) == .ack0 else { return .failed("no ACK0 for the data transfer") }
        let chunks = stride(from: 0, to: text.count, by: 200).map { Array(text[$0..<min($0 + 200, text.count)]) }
        var badCRCs = faults.badConfigurationCRCs
        for (index, chunk) in chunks.enumerated() {
            let last = index == chunks.count - 1
            let expected: Wire.Heard = index % 2 == 0 ? .ack1 : .ack0
            var tries = 0
            while true {
                tries += 1
                guard tries <= 5 else { return .failed("block \(index + 1) was never acknowledged") }
                let corrupt = badCRCs > 0
                if corrupt { badCRCs -= 1 }
                line.send(
                    Wire.frame(chunk, start: Wire.stx, last: last, corruptCRC: corrupt), note: "block \(index + 1)\(corrupt ? ", CRC wrong" : "")")
                let heard = line.hear(within: .seconds(1))
                if heard == expected { break }
                if heard != .nak { return .failed("block \(index + 1) answered \(HandheldLine.describe(heard))") }
            }
        }
        line.send([Wire.eot], note: "EOT")
        return .configured
    }
}
