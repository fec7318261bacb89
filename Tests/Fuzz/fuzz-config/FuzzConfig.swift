import FuzzSupport
import VendConfig

/// Any text through the config loader, as `vendd check-config` and start-up read a file: a valid
/// file must also give a summary and a resolved YAML that loads again to the same configuration.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    // ConfigLoader.load refuses a file that is not UTF-8 before it parses anything.
    guard let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self) else { return 0 }
    let config: VenddConfig
    do {
        config = try ConfigLoader.parse(text, file: "fuzz.yaml")
    } catch {
        _ = error.description  // what the technician reads
        return 0
    }
    _ = config.summary
    let resolved = config.resolvedYAML
    do {
        let again = try ConfigLoader.parse(resolved, file: "resolved.yaml")
        precondition(again.resolvedYAML == resolved, "resolving a resolved configuration changed it:\n\(resolved)\n---\n\(again.resolvedYAML)")
    } catch {
        preconditionFailure("the resolved configuration does not load:\n\(error)\n---\n\(resolved)")
    }
    return 0
}

@main enum FuzzConfig {
    static func main() { FuzzDriver.main(testOneInput) }
}
