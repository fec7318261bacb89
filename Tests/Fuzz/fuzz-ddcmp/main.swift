import FuzzSupport
import VendDEX

/// Bytes from a DDCMP master, as the machine's port reads them: the frame receiver must read the
/// same tokens however the reads cut them and every message it accepts must survive its own
/// encoding; the slave link, fed the bytes over time, must only ever send well-formed messages,
/// say why a session failed, and end every session it starts.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    checkReceiver(input)
    checkLink(input)
    return 0
}

func checkReceiver(_ input: [UInt8]) {
    var whole = DDCMPFrameReceiver(maximumLength: 512), byteByByte = DDCMPFrameReceiver(maximumLength: 512)
    let tokens = whole.receive(input)
    let again = input.flatMap { byteByByte.receive([$0]) }
    precondition(tokens == again, "the tokens depend on how the reads are cut")
    for token in tokens {
        switch token {
        case .frame(let frame):
            if case .data(let header, let data) = frame { precondition(header.length == data.count && data.count <= 512) }
            var receiver = DDCMPFrameReceiver(maximumLength: 512)
            precondition(receiver.receive(frame.bytes) == [.frame(frame)], "\(frame) does not survive its encoding")
        case .tooLong(let header):
            precondition(header.length > 512, "a message of \(header.length) bytes refused")
        case .badData(_, let reason):
            precondition(!reason.isEmpty, "corrupt data without a reason")
        case .badHeader, .noise:
            break
        }
    }
}

/// Records: a byte below 0x80 says how many of the following bytes the link reads at once; a
/// byte from 0x80 is a silence of (byte − 0x7F) × 10 ms. The audit is supplied when asked for,
/// except when the number of bytes read so far is a multiple of 5 (no audit: the read is
/// rejected).
func checkLink(_ input: [UInt8]) {
    var now: Int64 = 0
    var link = DDCMPSlaveLink(serialNumber: "VDD0000001")
    var sent = DDCMPFrameReceiver()
    var fed = 0
    func drain(_ events: [DDCMPLinkEvent]) {
        for event in events {
            switch event {
            case .readRequested: link.supplyAudit(fed % 5 != 0 ? Array("DXS*VDD0000001*VA*V0/6*1\r\n".utf8) : nil, at: now)
            case .failed(let stage, let reason): precondition(!stage.isEmpty && !reason.isEmpty)
            case .auditDelivered(let text, _): precondition(!text.isEmpty)
            default: break
            }
        }
        for token in sent.receive(link.takeOutput(at: now)) {
            guard case .frame = token else { preconditionFailure("the link sent \(token)") }
        }
    }
    var index = 0
    while index < input.count {
        let record = input[index]
        index += 1
        if record >= 0x80 {
            now += Int64(record - 0x7F) * 10
            drain(link.advance(to: now))
        } else {
            let bytes = Array(input[index..<min(index + Int(record), input.count)])
            index += bytes.count
            fed += bytes.count
            drain(link.receive(bytes, at: now))
        }
    }
    // Left alone, every session ends: the attempts and the link time-out bound it.
    for _ in 0..<1_000 {
        guard let deadline = link.nextDeadline else { break }
        now = max(now, deadline)
        drain(link.advance(to: now))
    }
    precondition(link.isIdle && link.nextDeadline == nil, "a session still open long after the master fell silent")
}

@main enum FuzzDDCMP {
    static func main() { FuzzDriver.main(testOneInput) }
}
