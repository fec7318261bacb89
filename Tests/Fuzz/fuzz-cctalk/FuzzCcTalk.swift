import CcTalk
import FuzzSupport

/// Bytes from the coin acceptor's serial line through the frame receiver, as the ccTalk driver
/// reads them, and every packet found through the reply decoders.
///
/// The input is a script: byte 0 picks the checksum (bit 0) and whether only packets to the
/// address in byte 1 are wanted (bit 1); then chunks of `[gap][length][bytes…]`, each arriving
/// `gap` ms after the previous one (more than 50 abandons a partial packet), a gap of 255 first
/// resetting the receiver as before a new command.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 2 else { return 0 }
    let checksum: FrameChecksum = input[0] & 1 == 0 ? .simple8 : .crc16
    let destination: UInt8? = input[0] & 2 == 0 ? nil : input[1]
    var receiver = FrameReceiver(checksum: checksum, destination: destination)
    var cursor = EventCursor(sequence: 0)
    var now: UInt64 = 0, fed = 0, delivered = 0
    var index = 2
    while index + 1 < input.count {
        let gap = input[index], length = Int(input[index + 1])
        let chunk = Array(input[(index + 2)...].prefix(length))
        index += 2 + chunk.count
        if gap == 255 { receiver.reset() }
        now += UInt64(gap) * 1_000_000
        _ = Frame.decode(chunk, checksum)
        fed += chunk.count
        for frame in receiver.receive(chunk, at: now) {
            precondition(destination == nil || frame.destination == destination, "\(frame) is not for \(destination!)")
            let wire = frame.encoded(checksum)
            precondition(Frame.decode(wire, checksum) == frame, "\(frame) does not survive encoding as \(wire)")
            delivered += wire.count
            decodeReply(frame.data, cursor: &cursor)
        }
    }
    // Every byte fed is in a packet delivered, thrown away, or still waiting (thrown away by reset).
    receiver.reset()
    let discarded = receiver.takeDiscarded()
    precondition(fed == delivered + discarded, "fed \(fed) bytes; \(delivered) delivered, \(discarded) discarded")
    precondition(receiver.isIdle)
    return 0
}

/// The reply decoders the driver applies to a packet's data.
func decodeReply(_ data: [UInt8], cursor: inout EventCursor) {
    _ = Payload.text(data)
    _ = Payload.serialNumber(data)
    _ = Payload.pollingInterval(data)
    _ = Payload.enabledPositions(Array(data.prefix(2)))
    let coin = CoinID(data)
    _ = coin.description
    for minorUnits: Int64 in [1, 5, 50, 200, 500, 100_000] { _ = coin.hasValue(minorUnits: minorUnits) }
    // `read buffered credit`: [counter][result A, result B] × 5.
    guard let counter = data.first else { return }
    _ = cursor.advance(to: counter)
    precondition(cursor.counter == counter, "the cursor shows \(cursor.counter), the device \(counter)")
    precondition(counter == 0 || (cursor.sequence - 1) % 255 + 1 == UInt64(counter), "sequence \(cursor.sequence) lost counter \(counter)")
    for pair in stride(from: 1, to: data.count - 1, by: 2) {
        _ = AcceptorEventCode.name(data[pair + 1])
        _ = AcceptorEventCode.rejected(data[pair + 1])
        _ = FaultCode.name(data[pair])
    }
}

@main enum FuzzCcTalk {
    static func main() { FuzzDriver.main(testOneInput) }
}
