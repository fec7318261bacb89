import Foundation
import VenddTestSupport

/// A JSON value that keeps booleans, integers and other numbers apart.
indirect enum JSONValue: Decodable, Equatable {
    case null, bool(Bool), integer(Int64), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    static func parse(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// The JSON schemas in a document (docs/vendctl.md, docs/mqtt.md), by `$id`, and the subset of JSON Schema they use:
/// `$ref` (to the shared `$defs`), `type`, `const`, `enum`, `pattern`, `minimum` and `maximum` (of
/// integers), `properties`, `required`, `additionalProperties: false`, `items`.
struct DocumentedSchemas {
    let schemas: [String: JSONValue]
    let definitions: [String: JSONValue]

    let document: String

    init(_ document: String = "docs/vendctl.md") throws {
        self.document = document
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent(document), encoding: .utf8)
        var schemas: [String: JSONValue] = [:]
        for block in text.components(separatedBy: "```json\n").dropFirst() {
            guard let end = block.range(of: "\n```") else { continue }
            let schema = try JSONValue.parse(String(block[..<end.lowerBound]))
            guard case .object(let members) = schema, case .string(let id)? = members["$id"] else {
                throw HarnessError("a JSON block in \(document) has no $id")
            }
            schemas[id] = schema
        }
        guard case .object(let defs)? = schemas["defs"], case .object(let definitions)? = defs["$defs"] else {
            throw HarnessError("\(document) has no shared $defs block")
        }
        self.schemas = schemas
        self.definitions = definitions
    }

    /// Every way `json` breaks the schema `id`, as "path: problem".
    func violations(of id: String, in json: String) throws -> [String] {
        guard let schema = schemas[id] else { throw HarnessError("\(document) documents no schema '\(id)'") }
        return check(try JSONValue.parse(json), against: schema, at: "$")
    }

    private func check(_ value: JSONValue, against schema: JSONValue, at path: String) -> [String] {
        guard case .object(let rules) = schema else { return ["\(path): the schema is not an object"] }
        if case .string(let reference)? = rules["$ref"] {
            let name = String(reference.dropFirst("#/$defs/".count))
            guard let definition = definitions[name] else { return ["\(path): unknown $ref \(reference)"] }
            return check(value, against: definition, at: path)
        }
        var problems: [String] = []
        if case .string(let type)? = rules["type"], type != value.typeName {
            return ["\(path): \(value.typeName) where the schema says \(type)"]
        }
        if let constant = rules["const"], constant != value { problems.append("\(path): not \(constant)") }
        if case .array(let allowed)? = rules["enum"], !allowed.contains(value) { problems.append("\(path): \(value) is not one of \(allowed)") }
        if case .integer(let number) = value {
            if case .integer(let minimum)? = rules["minimum"], number < minimum { problems.append("\(path): \(number) is below \(minimum)") }
            if case .integer(let maximum)? = rules["maximum"], number > maximum { problems.append("\(path): \(number) is above \(maximum)") }
        }
        if case .string(let pattern)? = rules["pattern"], case .string(let text) = value,
            text.range(of: pattern, options: .regularExpression) == nil
        {
            problems.append("\(path): '\(text)' does not match \(pattern)")
        }
        if case .object(let members) = value {
            let properties: [String: JSONValue] = if case .object(let p)? = rules["properties"] { p } else { [:] }
            if case .array(let required)? = rules["required"] {
                for case .string(let key) in required where members[key] == nil { problems.append("\(path): '\(key)' is missing") }
            }
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                if let rule = properties[key] {
                    problems += check(member, against: rule, at: "\(path).\(key)")
                } else if rules["additionalProperties"] == .bool(false) {
                    problems.append("\(path): '\(key)' is not documented")
                }
            }
        }
        if case .array(let elements) = value, let items = rules["items"] {
            for (index, element) in elements.enumerated() { problems += check(element, against: items, at: "\(path)[\(index)]") }
        }
        return problems
    }
}
