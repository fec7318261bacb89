/// Where a node starts in the text, counted from 1 as editors do.
public struct Mark: Hashable, Sendable, CustomStringConvertible {
    public let line: Int
    public let column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }
}

/// One node of a YAML document as written: no value is typed here (a scalar is its text), so the
/// validator decides what `yes` or `010` mean, and reports it with the node's mark.
public struct Node: Sendable {
    public typealias Pair = Mapping.Element
    public typealias Mapping = [(key: Node, value: Node)]

    public enum Content: Sendable {
        case scalar(Scalar)
        case mapping(Mapping)
        case sequence([Node])
    }

    public struct Scalar: Hashable, Sendable {
        public enum Style: Hashable, Sendable {
            case plain, singleQuoted, doubleQuoted, literal, folded
        }

        public let string: String
        public let style: Style

        public init(string: String, style: Style) {
            self.string = string
            self.style = style
        }
    }

    public let content: Content
    public let mark: Mark

    public init(_ content: Content, mark: Mark) {
        self.content = content
        self.mark = mark
    }

    public var scalar: Scalar? {
        if case .scalar(let scalar) = content { scalar } else { nil }
    }

    public var mapping: Mapping? {
        if case .mapping(let pairs) = content { pairs } else { nil }
    }

    public var sequence: [Node]? {
        if case .sequence(let nodes) = content { nodes } else { nil }
    }
}
