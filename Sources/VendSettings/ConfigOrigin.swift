/// A place in the configuration file, 1-based as editors show it.
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }
}

/// Where a value came from, so that a driver can name the key behind a hardware error.
public struct ConfigOrigin: Hashable, Sendable, CustomStringConvertible {
    public let location: SourceLocation
    public let path: String

    public init(location: SourceLocation, path: String) {
        self.location = location
        self.path = path
    }

    public var description: String { "\(path) (\(location))" }
}
