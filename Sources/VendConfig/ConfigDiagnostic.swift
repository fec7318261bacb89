import VendSettings

/// One problem in the configuration, told the way a technician can act on it:
/// `vendd.yaml:14:12: slots[A3].price: '1.505' has more than 2 fraction digits`.
public struct ConfigDiagnostic: Hashable, Sendable, CustomStringConvertible {
    public let location: SourceLocation
    /// The key in domain words: `slots[A3].price`, `coin_acceptor.channels[3].value`.
    public let path: String
    public let message: String

    public var description: String {
        path.isEmpty ? "\(location): \(message)" : "\(location): \(path): \(message)"
    }
}

/// Every problem found in one read of the file, in file order.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public let file: String
    public let diagnostics: [ConfigDiagnostic]

    public var description: String {
        let count = diagnostics.count == 1 ? "1 error" : "\(diagnostics.count) errors"
        return (diagnostics.map(\.description) + ["\(file): \(count); nothing was applied"]).joined(separator: "\n")
    }
}

/// A key path in domain words, built while walking the file.
struct ConfigPath: CustomStringConvertible {
    let description: String

    static let root = ConfigPath(description: "")

    func key(_ key: String) -> ConfigPath {
        ConfigPath(description: description.isEmpty ? key : "\(description).\(key)")
    }

    /// An element of a list, named by what identifies it (`slots[A3]`) or by its position (`#2`).
    func element(_ label: String) -> ConfigPath {
        ConfigPath(description: "\(description)[\(label)]")
    }
}
