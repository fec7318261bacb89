import Foundation
import Testing
import VendConfig
import VenddTestSupport

/// A file that cannot be read is reported for what it is: a directory, a refused open, bytes
/// that are not UTF-8, each with what to do.
@Suite struct ConfigFileReadTests {
    @Test func aDirectoryIsNotCalledNotUTF8() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.load(file: directory.path) }
        #expect(
            error.diagnostics.map(\.description) == [
                "\(directory.path):1:1: cannot read the file: it is a directory (pass the path of the configuration file, e.g. /etc/vendd/vendd.yaml)"
            ])
    }

    @Test func bytesThatAreNotUTF8AreNamedWithTheirLine() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path + "/vendd.yaml"
        // "Caf\xe9" as Latin-1, on the second line.
        try Data("machine:\n  name: \"Caf".utf8 + [0xE9] + Data("\"\n".utf8)).write(to: URL(fileURLWithPath: file))
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.load(file: file) }
        #expect(
            error.diagnostics.map(\.description) == [
                "\(file):2:13: the file is not UTF-8 text here (byte 0xE9); save it as UTF-8"
            ])
    }
}
