import Testing
import VendConfig

/// A test's base configuration with some of its text replaced: each suite keeps one valid file and
/// spells each case as the edits that make it one.
enum EditedConfig {
    /// `base` with each `(old, new)` replaced; an `old` the base lacks is a mistake in the test.
    static func text(
        _ base: String, _ edits: [(String, String)], sourceLocation: SourceLocation = #_sourceLocation
    ) -> String {
        var text = base
        for (old, new) in edits {
            #expect(text.contains(old), "the base has no '\(old)'", sourceLocation: sourceLocation)
            text = text.replacingOccurrences(of: old, with: new)
        }
        return text
    }

    /// The loader's diagnostics for the edited file, which must not load.
    static func errors(
        _ base: String, _ edits: [(String, String)], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String] {
        let edited = text(base, edits, sourceLocation: sourceLocation)
        let error = try #require(throws: ConfigError.self, sourceLocation: sourceLocation) {
            try ConfigLoader.parse(edited, file: "test.yaml")
        }
        return error.diagnostics.map(\.description)
    }
}
