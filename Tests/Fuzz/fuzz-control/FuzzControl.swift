import FoundationEssentials
import FuzzSupport
import VendControl

/// Any line through the control socket's request decoder, as a local client can send it: it
/// decodes or gives an error, and a decoded request encodes back to the same request.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    // As ControlServer reads a line: bytes up to the newline, invalid UTF-8 repaired.
    let line = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    switch ControlRequest.decode(line: line) {
    case .failure(let error):
        // The error goes back to the client as a JSON line.
        precondition((try? JSONEncoder().encode(ControlResponse.failure(error))) != nil, "an error that cannot be sent: \(error)")
    case .success(let request):
        guard let encoded = try? JSONEncoder().encode(request) else { preconditionFailure("cannot encode \(request)") }
        let again = ControlRequest.decode(line: String(decoding: encoded, as: UTF8.self))
        precondition(again == .success(request), "\(request) encodes as \(String(decoding: encoded, as: UTF8.self)), which decodes as \(again)")
    }
    return 0
}

@main enum FuzzControl {
    static func main() { FuzzDriver.main(testOneInput) }
}
