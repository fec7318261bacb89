import VendSettings
import VendText
import VendYAML
import VendingCore

/// Collects diagnostics while the file is read, so that every problem is reported in one run.
final class DiagnosticSink {
    let file: String
    private(set) var diagnostics: [ConfigDiagnostic] = []

    init(file: String) { self.file = file }

    func report(_ message: String, at node: Node?, path: ConfigPath) {
        report(message, at: node?.mark, path: path)
    }

    func report(_ message: String, at mark: Mark?, path: ConfigPath) {
        let location = SourceLocation(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1)
        diagnostics.append(ConfigDiagnostic(location: location, path: path.description, message: message))
    }

    func report(_ message: String, at location: SourceLocation, path: String) {
        diagnostics.append(ConfigDiagnostic(location: location, path: path, message: message))
    }

    func location(of node: Node) -> SourceLocation {
        SourceLocation(file: file, line: node.mark.line, column: node.mark.column)
    }
}

/// Reads one mapping of the file. Every key the code asks for is remembered; `finish()` reports
/// the keys nobody asked for as unknown, with the nearest known key as a suggestion. So the code
/// that consumes the file defines what is valid, and the two cannot drift apart.
///
/// Typed reads never trap: a wrong value is reported and read as nil.
final class MappingReader {
    let node: Node
    let path: ConfigPath
    let sink: DiagnosticSink
    private let pairs: [(key: String, keyNode: Node, value: Node)]
    private var asked: [String] = []
    /// Required keys found missing; reported by `finish()`, unless a misspelt key explains them.
    private var missing: [String] = []

    /// Nil (and reported) when `node` is not a mapping.
    init?(_ node: Node, path: ConfigPath, sink: DiagnosticSink) {
        guard let mapping = node.mapping else {
            sink.report("expected a mapping of 'key: value' lines, found \(node.kindDescription)", at: node, path: path)
            return nil
        }
        self.node = node
        self.path = path
        self.sink = sink
        var pairs: [(String, Node, Node)] = []
        for (key, value) in mapping {
            guard let name = key.scalar?.string else {
                sink.report("a key must be plain text, found \(key.kindDescription)", at: key, path: path)
                continue
            }
            pairs.append((name, key, value))
        }
        self.pairs = pairs
    }

    /// The value of `key`, or nil when the key is absent or has no value.
    func value(_ key: String) -> Node? {
        if !asked.contains(key) { asked.append(key) }
        guard let value = pairs.first(where: { $0.key == key })?.value, !value.isNull else { return nil }
        return value
    }

    func has(_ key: String) -> Bool { value(key) != nil }

    /// The value of a key that must be there; its absence is reported.
    func required(_ key: String) -> Node? {
        let found = value(key)
        if found == nil {
            if let keyNode = pairs.first(where: { $0.key == key })?.keyNode {
                sink.report("'\(key)' has no value", at: keyNode, path: path)
            } else if !missing.contains(key) {
                missing.append(key)
            }
        }
        return found
    }

    /// Reports every key that the reading code never asked for, and the required keys missing.
    /// A misspelt key and the required key it was meant to be make one error, not two.
    func finish() {
        var explained: Set<String> = []
        for (key, keyNode, _) in pairs where !asked.contains(key) {
            var message = "unknown key '\(key)'"
            if let suggestion = closestMatch(to: key, among: asked) {
                message += "; did you mean '\(suggestion)'?"
                explained.insert(suggestion)
            }
            message += " (allowed here: \(asked.joined(separator: ", ")))"
            sink.report(message, at: keyNode, path: path)
        }
        for key in missing where !explained.contains(key) {
            sink.report("missing required key '\(key)'", at: node, path: path)
        }
    }

    // MARK: - Typed reads

    func nested(_ key: String, required isRequired: Bool = true) -> MappingReader? {
        guard let node = isRequired ? required(key) : value(key) else { return nil }
        return MappingReader(node, path: path.key(key), sink: sink)
    }

    func list(_ key: String, required isRequired: Bool = true) -> [Node]? {
        guard let node = isRequired ? required(key) : value(key) else { return nil }
        guard let sequence = node.sequence else {
            sink.report("expected a list ('- ' items), found \(node.kindDescription)", at: node, path: path.key(key))
            return nil
        }
        return Array(sequence)
    }

    func string(_ key: String, required isRequired: Bool = true) -> String? {
        guard let node = isRequired ? required(key) : value(key) else { return nil }
        return ScalarRules.text(node, path: path.key(key), sink: sink)
    }

    func int(_ key: String, in range: ClosedRange<Int>, required isRequired: Bool = true) -> Int? {
        guard let node = isRequired ? required(key) : value(key) else { return nil }
        return ScalarRules.integer(node, in: range, path: path.key(key), sink: sink)
    }

    func int(_ key: String, in range: ClosedRange<Int>, default defaultValue: Int) -> Int? {
        has(key) ? int(key, in: range) : defaultValue
    }

    func bool(_ key: String, default defaultValue: Bool) -> Bool? {
        guard let node = value(key) else { return defaultValue }
        return ScalarRules.boolean(node, path: path.key(key), sink: sink)
    }

    func choice<Choice: RawRepresentable & CaseIterable>(_ key: String, default defaultValue: Choice?) -> Choice?
    where Choice.RawValue == String {
        guard let node = defaultValue == nil ? required(key) : value(key) else { return defaultValue }
        return ScalarRules.choice(node, path: path.key(key), sink: sink)
    }

    func money(_ key: String, currency: Currency?) -> Money? {
        guard let node = required(key) else { return nil }
        guard let currency else { return nil }  // the currency's own error is already reported
        return ScalarRules.money(node, currency: currency, path: path.key(key), sink: sink)
    }

    func milliseconds(_ key: String, in range: ClosedRange<Int>, default defaultValue: Int) -> Duration? {
        int(key, in: range, default: defaultValue).map { .milliseconds($0) }
    }
}

/// The strict scalar rules: YAML 1.1's implicit typing (`yes` as true, `010` as octal, `1:30` as
/// 90) never applies, because every scalar is read as text and checked here.
enum ScalarRules {
    static func text(_ node: Node, path: ConfigPath, sink: DiagnosticSink) -> String? {
        guard let scalar = node.scalar else {
            sink.report("expected a value, found \(node.kindDescription)", at: node, path: path)
            return nil
        }
        return scalar.string
    }

    static func integer(_ node: Node, in range: ClosedRange<Int>, path: ConfigPath, sink: DiagnosticSink) -> Int? {
        guard let text = text(node, path: path, sink: sink) else { return nil }
        let digits = text.hasPrefix("-") ? text.dropFirst() : text[...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(text) else {
            sink.report("'\(text)' is not a whole number (expected \(range.lowerBound) to \(range.upperBound))", at: node, path: path)
            return nil
        }
        guard digits.count == 1 || !digits.hasPrefix("0") else {
            sink.report("'\(text)' has a leading zero; write \(value)", at: node, path: path)
            return nil
        }
        guard range.contains(value) else {
            sink.report("\(value) is out of range (allowed: \(range.lowerBound) to \(range.upperBound))", at: node, path: path)
            return nil
        }
        return value
    }

    static func boolean(_ node: Node, path: ConfigPath, sink: DiagnosticSink) -> Bool? {
        guard let text = text(node, path: path, sink: sink) else { return nil }
        switch text {
        case "true": return true
        case "false": return false
        default:
            sink.report("'\(text)' is not a yes/no value (write true or false)", at: node, path: path)
            return nil
        }
    }

    static func choice<Choice: RawRepresentable & CaseIterable>(_ node: Node, path: ConfigPath, sink: DiagnosticSink) -> Choice?
    where Choice.RawValue == String {
        guard let text = text(node, path: path, sink: sink) else { return nil }
        if let value = Choice(rawValue: text) { return value }
        let allowed = Choice.allCases.map(\.rawValue)
        var message = "'\(text)' is not one of \(listing(allowed))"
        if let suggestion = closestMatch(to: text, among: allowed) { message += "; did you mean '\(suggestion)'?" }
        sink.report(message, at: node, path: path)
        return nil
    }

    static func money(_ node: Node, currency: Currency, path: ConfigPath, sink: DiagnosticSink) -> Money? {
        guard let text = text(node, path: path, sink: sink) else { return nil }
        do {
            let money = try Money(parsing: text, currency: currency)
            guard !money.isZero else {
                sink.report("must be more than 0", at: node, path: path)
                return nil
            }
            return money
        } catch {
            // A comma is answered with the amount to write; the rest with an example.
            if case .comma = error {
                sink.report("\(error)", at: node, path: path)
                return nil
            }
            let example = currency.minorDigits == 0 ? "1200" : "1.50"
            sink.report("\(error) (write an amount in \(currency.code) like \(example))", at: node, path: path)
            return nil
        }
    }
}

extension Node {
    /// `key:`, `key: ~` and `key: null` all mean "no value".
    var isNull: Bool {
        guard let scalar, scalar.style == .plain else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }

    var kindDescription: String {
        switch content {
        case .scalar(let scalar): "the value '\(scalar.string)'"
        case .mapping: "a mapping"
        case .sequence: "a list"
        }
    }
}
