import FuzzSupport
import MDB

/// Bytes from a Qibixx MDB interface, as the transport reads them: split into lines, each line
/// parsed as the interface's answer (and as a command, the simulator's side of the codec), and
/// every peripheral data block through every answer decoder of the coin changer, the bill
/// validator and the cashless reader. The input itself also goes to the decoders as one raw data block, so the fuzzer
/// reaches them without having to spell hex.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    for line in splitLines(input) {
        if case .peripheral(.data(let block))? = parseReply(line) { decodeAnswers(block) }
        if let command = QibixxCommand.parse(line) {
            precondition(QibixxCommand.parse(command.line) == command, "'\(line)' parses as \(command), whose line '\(command.line)' does not")
        }
    }
    decodeAnswers(input)
    return 0
}

/// The lines of `input`, which must not depend on how reads cut the stream; a line too long is
/// cut and counted (one count per `limit` bytes beyond the first `limit`), never kept growing.
func splitLines(_ input: [UInt8]) -> [String] {
    var whole = LineSplitter(), byteByByte = LineSplitter()
    let lines = whole.receive(input)
    let again = input.flatMap { byteByByte.receive([$0]) }
    precondition(lines == again && whole.overlongLines == byteByByte.overlongLines, "the lines depend on how the reads are cut")
    let newline = UInt8(ascii: "\n"), carriageReturn = UInt8(ascii: "\r")
    precondition(lines.count == input.count(where: { $0 == newline }), "\(lines.count) lines from \(input.count(where: { $0 == newline })) newlines")
    let kept = input.split(separator: newline, omittingEmptySubsequences: false).map { $0.count(where: { $0 != carriageReturn }) }
    let cuts = kept.reduce(0) { $0 + max(0, $1 - 1) / LineSplitter.limit }
    precondition(whole.overlongLines == cuts, "\(whole.overlongLines) overlong lines counted, \(cuts) cut")
    for line in lines {
        precondition(!line.utf8.contains(newline) && !line.utf8.contains(carriageReturn), "a line with its terminator: \(line.debugDescription)")
        precondition(line.unicodeScalars.count <= LineSplitter.limit, "a line of \(line.unicodeScalars.count) characters")
    }
    return lines
}

/// The reply in `line`. A line whose bytes begin `p,` or `m,` answers the command just sent: it
/// is decoded or refused as garbled (the transport then warns that a coin may be lost), never
/// passed off as the interface's chatter. A decoded answer is the line itself, up to the case of
/// its letters, and parses to itself again.
func parseReply(_ line: String) -> QibixxReply? {
    let isAnswer = line.utf8.starts(with: "p,".utf8) || line.utf8.starts(with: "m,".utf8)
    let reply: QibixxReply
    do {
        reply = try QibixxReply.parse(line)
    } catch {
        precondition(isAnswer, "'\(line)' is refused as garbled, but it is no answer line: \(error)")
        precondition(
            error.line == line && !error.reason.isEmpty && error.description.contains("'\(line)'"),
            "the error \(error) does not name its line '\(line)'")
        return nil
    }
    if case .other(let text) = reply {
        precondition(!isAnswer, "the answer '\(line)' is taken for chatter")
        precondition(text == line, "'\(line)' kept as '\(text)'")
        return reply
    }
    precondition(asciiUppercased(reply.line) == asciiUppercased(line), "'\(line)' parses as \(reply), whose line is '\(reply.line)'")
    precondition((try? QibixxReply.parse(reply.line)) == reply, "\(reply) does not survive its line '\(reply.line)'")
    return reply
}

func asciiUppercased(_ text: String) -> [UInt8] {
    text.utf8.map { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) ? $0 - 0x20 : $0 }
}

/// Every answer decoder on one data block (the transport cannot know which command a block it
/// did not expect answers). POLL answers must account for every byte: a byte dropped may be a coin.
func decodeAnswers(_ bytes: [UInt8]) {
    if let activities = decode(
        bytes, "changer POLL", { (bytes) throws(MDBDecodeError) in try ChangerActivity.parse(bytes) }, encode: { $0.flatMap(\.bytes) }, exactly: 0)
    {
        for case .status(let status) in activities { precondition(!status.name.isEmpty) }
    }
    let bills = BillActivity.parse(bytes)
    precondition(bills.map(\.byte) == bytes, "bill POLL \(Hex.encode(bytes)) parses as \(bills), which encodes as \(Hex.encode(bills.map(\.byte)))")
    for activity in bills {
        if case .status(let status) = activity { precondition(!status.name.isEmpty) }
        if case .bill(_, let routing) = activity { precondition(!routing.name.isEmpty) }
    }
    if let setup = decode(bytes, "changer SETUP", { (bytes) throws(MDBDecodeError) in try ChangerSetup(bytes) }, encode: \.bytes, exactly: 23) {
        _ = setup.currency.description
        for type in 0..<16 { _ = setup.value(ofType: type) }
    }
    if let tubes = decode(bytes, "TUBE STATUS", { (bytes) throws(MDBDecodeError) in try TubeStatus(bytes) }, encode: \.bytes, exactly: 18) {
        precondition(tubes.suspectTubes.allSatisfy(tubes.full.contains))
    }
    _ = decode(bytes, "PAYOUT STATUS", { (bytes) throws(MDBDecodeError) in try PayoutStatus(bytes) }, encode: \.bytes, exactly: 16)
    for withFeatures in [true, false] {
        _ =
            decode(
                bytes, "IDENTIFICATION", { (bytes) throws(MDBDecodeError) in try PeripheralIdentification(bytes, withFeatures: withFeatures) },
                encode: { $0.bytes(withFeatures: withFeatures) })?.summary
    }
    if let setup = decode(bytes, "bill SETUP", { (bytes) throws(MDBDecodeError) in try BillSetup(bytes) }, encode: \.bytes) {
        _ = setup.currency.description
        for type in 0..<16 { _ = setup.value(ofType: type) }
    }
    _ = decode(bytes, "STACKER", { (bytes) throws(MDBDecodeError) in try StackerStatus(bytes) }, encode: \.bytes, exactly: 2)
    // A cashless reader's answer splits differently by its level and money width.
    for (level, expanded) in [(UInt8(1), false), (2, false), (3, false), (3, true)] {
        _ = decode(
            bytes, "cashless answer (level \(level)\(expanded ? ", 32-bit" : ""))",
            { (bytes) throws(MDBDecodeError) in try CashlessResponse.parse(bytes, level: level, expanded: expanded) },
            encode: { $0.flatMap { $0.bytes(level: level, expanded: expanded) } })
    }
}

/// `bytes` decoded as `name`: a refusal is an error naming the bytes it refused; a decoded answer
/// re-encodes to bytes that decode the same, and with `exactly` to the very bytes given, padded
/// with zeros to that length (the answers whose missing trailing bytes count as 0).
func decode<Answer: Equatable>(
    _ bytes: [UInt8], _ name: String, _ decoder: ([UInt8]) throws(MDBDecodeError) -> Answer,
    encode: (Answer) -> [UInt8], exactly length: Int? = nil
) -> Answer? {
    let answer: Answer
    do {
        answer = try decoder(bytes)
    } catch {
        precondition(
            error.bytes == bytes && !error.what.isEmpty && error.description.hasSuffix(": \(Hex.encode(bytes)))"),
            "\(name): the error '\(error)' does not name its input \(Hex.encode(bytes))")
        return nil
    }
    let encoded = encode(answer)
    if let length {
        precondition(
            encoded == bytes + [UInt8](repeating: 0, count: max(0, length - bytes.count)),
            "\(name) \(Hex.encode(bytes)) re-encodes as \(Hex.encode(encoded))")
    }
    do {
        let again = try decoder(encoded)
        precondition(again == answer, "\(name) \(answer) re-encodes as \(Hex.encode(encoded)), which decodes as \(again)")
    } catch {
        preconditionFailure("\(name) \(answer) re-encodes as \(Hex.encode(encoded)), which is refused: \(error)")
    }
    return answer
}

@main enum FuzzMDB {
    static func main() { FuzzDriver.main(testOneInput) }
}
