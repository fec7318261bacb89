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
