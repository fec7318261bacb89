import Foundation

/// The repository's root, found from this file's path.
public let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The path of an executable SwiftPM built beside the test bundle (`VENDD_BIN_DIR` overrides).
public func builtProduct(_ name: String) -> String {
    if let directory = ProcessInfo.processInfo.environment["VENDD_BIN_DIR"] {
        return URL(fileURLWithPath: directory).appendingPathComponent(name).path
    }
    let bundle = CommandLine.arguments.first { $0.hasSuffix(".xctest") } ?? Bundle.main.bundlePath
    return URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent(name).path
}

/// A fresh directory under the system's temporary directory, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("vendd-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func remove() { try? FileManager.default.removeItem(at: url) }
}

/// SplitMix64: a tiny seeded generator, so a failing random test can be replayed from its seed.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
