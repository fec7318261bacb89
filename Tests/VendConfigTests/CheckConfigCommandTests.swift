import Foundation
import Testing
import VenddTestSupport

/// `vendd check-config` as a technician runs it: exit status, output streams.
@Suite struct CheckConfigCommandTests {
    static let vendd = builtProduct("vendd")

    static func run(_ arguments: [String]) throws -> ProcessRun {
        try ProcessRun.run(vendd, arguments)
    }

    @Test func aValidFilePrintsTheSummaryAndExitsZero() throws {
        let result = try Self.run(["check-config", repositoryRoot.appendingPathComponent("config/vendd.yaml").path])
        #expect(result.status == 0)
        #expect(result.output.contains("configuration OK"))
        #expect(result.output.contains("  A1    Banana Milk       1,200원    8"))
        #expect(result.errors.isEmpty)
    }

    @Test func anInvalidFileListsEveryErrorAndExits78() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sample = try String(contentsOf: repositoryRoot.appendingPathComponent("config/vendd.yaml"), encoding: .utf8)
        let broken =
            sample
            .replacingOccurrences(of: "    price: 1400", with: "    prise: 1400")
            .replacingOccurrences(of: "    product: hot-latte", with: "    product: hot-late")
            .replacingOccurrences(of: "relay: { line: 8,", with: "relay: { line: 7,")
        let file = directory.appendingPathComponent("vendd.yaml")
        try broken.write(to: file, atomically: true, encoding: .utf8)
        let result = try Self.run(["check-config", file.path])
        #expect(result.status == 78)
        #expect(result.output.isEmpty)
        let lines = result.errors.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines.last == "\(file.path): 3 errors; nothing was applied")
        #expect(lines.allSatisfy { $0.hasPrefix(file.path + ":") })
    }

    @Test func printShowsTheResolvedFile() throws {
        let result = try Self.run(["check-config", "--print", repositoryRoot.appendingPathComponent("config/examples/minimal.yaml").path])
        #expect(result.status == 0)
        #expect(result.output.contains("  vend_timeout_ms: 30000\n"))
        #expect(result.output.contains("    relay: {line: 6, active_low: false, pulse_ms: 500, max_on_ms: 3000}\n"))
    }
}
