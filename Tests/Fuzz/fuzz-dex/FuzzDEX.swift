import FuzzSupport
import VendDEX

/// Bytes from a DEX handheld, as the machine's port reads them: the frame receiver must read the
/// same tokens however the reads cut them, every block it accepts must survive its own
/// encoding, and the machine's link, fed the bytes over time, must only ever send well-formed
/// frames and end every session it starts.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    checkReceiver(input)
    checkLink(input)
    return 0
}

func checkReceiver(_ input: [UInt8]) {
    var whole = DEXFrameReceiver(), byteByByte = DEXFrameReceiver()
    let tokens = whole.receive(input)
    let again = input.flatMap { byteByByte.receive([$0]) }
    precondition(tokens == again, "the tokens depend on how the reads are cut")
    for token in tokens {
        switch token {
        case .block(let block):
            precondition(block.payload.count <= DEXBlock.maximumPayload, "a block of \(block.payload.count) bytes accepted")
            var receiver = DEXFrameReceiver()
            precondition(receiver.receive(block.bytes) == [.block(block)], "\(block) does not survive its encoding")
        case .badBlock(let reason):
            precondition(!reason.isEmpty, "a bad block without a reason")
        default:
            break
        }
    }
}

/// The first byte picks who makes the first handshake; then each byte is either a gap of time
/// (0xF0…0xFF: that many hundred milliseconds) or sent to the link.
func checkLink(_ input: [UInt8]) {
    guard let first = input.first else { return }
    var now: Int64 = 0
    var link = DEXMachineLink(communicationID: "VDD0000001", firstHandshakeSide: first & 1 == 0 ? .handheld : .machine, now: now)
    var sent = DEXFrameReceiver()
    func drain(_ events: [DEXLinkEvent]) {
        for event in events {
            if case .handshake = event { link.supplyAudit(Array("DXS*VDD0000001*VA*V0/6*1\r\n".utf8)) }
            if case .failed(let stage, let reason) = event { precondition(!stage.isEmpty && !reason.isEmpty) }
        }
        for token in sent.receive(link.takeOutput(at: now)) {
            switch token {
            case .noise(let byte): preconditionFailure("the link sent a stray byte 0x\(byte)")
            case .badBlock(let reason): preconditionFailure("the link sent a bad block: \(reason)")
            default: break
            }
        }
    }
    for byte in input.dropFirst() {
        if byte >= 0xF0 {
            now += Int64(byte - 0xEF) * 100
            drain(link.advance(to: now))
        } else {
            drain(link.receive([byte], at: now))
        }
    }
    // Left alone, every session ends within the overall bound.
    for _ in 0..<1_000 {
        guard !link.isIdle, let deadline = link.nextDeadline else { break }
        now = max(now, deadline)
        drain(link.advance(to: now))
    }
    precondition(link.isIdle, "a session still open long after the handheld fell silent")
}

@main enum FuzzDEX {
    static func main() { FuzzDriver.main(testOneInput) }
}
