import CYAML

/// The technician's YAML read with libyaml, the reference C parser, into `Node`s that keep their
/// line and column. Only composition: values stay text for the validator, anchors and aliases are
/// resolved, and a key repeated in one mapping is an error (YAML forbids it; libyaml does not check).
public enum YAMLDocument {
    /// The one document in `text`; nil when it holds none (empty, or only comments).
    public static func compose(_ text: String) throws(YAMLError) -> Node? {
        let reader = EventReader(text)
        try reader.expect(YAML_STREAM_START_EVENT)
        let (first, _) = try reader.next()
        guard first.type == YAML_DOCUMENT_START_EVENT else { return nil }  // the stream's end
        var composer = Composer(reader: reader)
        let root = try composer.node(from: try reader.next())
        try reader.expect(YAML_DOCUMENT_END_EVENT)
        let (after, mark) = try reader.next()
        if after.type == YAML_DOCUMENT_START_EVENT { throw .severalDocuments(at: mark) }
        return root
    }
}

/// One libyaml event, copied out of the C structure (which is freed at once).
struct Event {
    enum Kind { case scalar(String, Node.Scalar.Style), alias(String), sequenceStart, mappingStart, end, other }
    let type: yaml_event_type_t
    let kind: Kind
    let anchor: String?
}

/// libyaml's parser over one text, event by event.
final class EventReader {
    private var parser = yaml_parser_t()
    private let input: UnsafeMutableBufferPointer<UInt8>

    init(_ text: String) {
        input = .allocate(capacity: text.utf8.count)
        _ = input.initialize(from: text.utf8)
        yaml_parser_initialize(&parser)
        yaml_parser_set_input_string(&parser, input.baseAddress, input.count)
    }

    deinit {
        yaml_parser_delete(&parser)
        input.deallocate()
    }

    func next() throws(YAMLError) -> (Event, Mark) {
        var event = yaml_event_t()
        guard yaml_parser_parse(&parser, &event) == 1 else { throw error() }
        defer { yaml_event_delete(&event) }
        let mark = Mark(line: event.start_mark.line + 1, column: event.start_mark.column + 1)
        let text = { (pointer: UnsafeMutablePointer<UInt8>?) in pointer.map { String(cString: $0) } }
        switch event.type {
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let value = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
            return (Event(type: event.type, kind: .scalar(value, Self.style(scalar.style)), anchor: text(scalar.anchor)), mark)
        case YAML_ALIAS_EVENT:
            return (Event(type: event.type, kind: .alias(text(event.data.alias.anchor) ?? ""), anchor: nil), mark)
        case YAML_SEQUENCE_START_EVENT:
            return (Event(type: event.type, kind: .sequenceStart, anchor: text(event.data.sequence_start.anchor)), mark)
        case YAML_MAPPING_START_EVENT:
            return (Event(type: event.type, kind: .mappingStart, anchor: text(event.data.mapping_start.anchor)), mark)
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            return (Event(type: event.type, kind: .end, anchor: nil), mark)
        default:
            return (Event(type: event.type, kind: .other, anchor: nil), mark)
        }
    }

    /// Reads the next event, which the grammar guarantees is of `type` (libyaml has checked).
    func expect(_ type: yaml_event_type_t) throws(YAMLError) {
        let (event, mark) = try next()
        guard event.type == type else { throw .syntax(problem: "unexpected structure", at: mark) }
    }

    private func error() -> YAMLError {
        let problem = parser.problem.map { String(cString: $0) } ?? "unreadable text"
        guard parser.error == YAML_READER_ERROR else {
            return .syntax(problem: problem, at: Mark(line: parser.problem_mark.line + 1, column: parser.problem_mark.column + 1))
        }
        // The reader reports a byte offset, not a mark: count lines up to it.
        let before = input.prefix(parser.problem_offset)
        let line = before.count(where: { $0 == UInt8(ascii: "\n") }) + 1
        let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        let column = String(decoding: input[lineStart..<parser.problem_offset], as: UTF8.self).count + 1
        return .syntax(problem: problem, at: Mark(line: line, column: column))
    }

    private static func style(_ style: yaml_scalar_style_t) -> Node.Scalar.Style {
        switch style {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
        case YAML_LITERAL_SCALAR_STYLE: .literal
        case YAML_FOLDED_SCALAR_STYLE: .folded
        default: .plain
        }
    }
}

/// Builds nodes from events, remembering anchored nodes for the aliases that follow.
struct Composer {
    let reader: EventReader
    private var anchors: [String: Node] = [:]

    init(reader: EventReader) { self.reader = reader }

    mutating func node(from start: (Event, Mark)) throws(YAMLError) -> Node {
        let (event, mark) = start
        let node: Node
        switch event.kind {
        case .scalar(let value, let style):
            node = Node(.scalar(Node.Scalar(string: value, style: style)), mark: mark)
        case .alias(let name):
            guard let anchored = anchors[name] else { throw .undefinedAlias(name, at: mark) }
            return anchored
        case .sequenceStart:
            var items: [Node] = []
            while let next = try nextUnlessEnd() {
                items.append(try self.node(from: next))
            }
            node = Node(.sequence(items), mark: mark)
        case .mappingStart:
            var pairs: Node.Mapping = []
            var seen: [String: Mark] = [:]
            while let next = try nextUnlessEnd() {
                let key = try self.node(from: next)
                let value = try self.node(from: try reader.next())
                if let name = key.scalar?.string {
                    if let first = seen[name] { throw .duplicateKey(name, first: first, second: key.mark) }
                    seen[name] = key.mark
                }
                pairs.append((key, value))
            }
            node = Node(.mapping(pairs), mark: mark)
        case .end, .other:
            throw .syntax(problem: "unexpected structure", at: mark)
        }
        if let anchor = event.anchor { anchors[anchor] = node }
        return node
    }

    /// The next event of a collection; nil at the collection's end.
    private func nextUnlessEnd() throws(YAMLError) -> (Event, Mark)? {
        let next = try reader.next()
        if case .end = next.0.kind { return nil }
        return next
    }
}
