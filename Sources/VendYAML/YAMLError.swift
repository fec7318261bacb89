/// Why a text is not one YAML document, with the place libyaml (or the composer) stopped.
public enum YAMLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A scanner, parser or reader error: `problem` is libyaml's own wording.
    case syntax(problem: String, at: Mark)
    /// An alias (`*name`) with no anchor (`&name`) before it.
    case undefinedAlias(String, at: Mark)
    /// The same key twice in one mapping: `first` is where it was, `second` the repetition.
    case duplicateKey(String, first: Mark, second: Mark)
    /// More than one document (`---`) in the text.
    case severalDocuments(at: Mark)

    public var description: String {
        switch self {
        case .syntax(let problem, let mark): "\(mark): \(problem)"
        case .undefinedAlias(let name, let mark): "\(mark): no anchor '&\(name)' before the alias '*\(name)'"
        case .duplicateKey(let key, let first, let second): "\(second): '\(key)' appears twice (first at \(first))"
        case .severalDocuments(let mark): "\(mark): more than one document"
        }
    }
}
