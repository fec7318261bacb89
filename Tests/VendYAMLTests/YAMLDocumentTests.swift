import Testing
import VendYAML

@Suite struct YAMLDocumentTests {
    @Test func nodesKeepTheirTextStyleAndPlace() throws {
        let root = try #require(try YAMLDocument.compose("machine:\n  name: 'A1'\n  price: 010\nslots: [a, \"b\"]\n"))
        let top = try #require(root.mapping)
        #expect(top.map(\.key.scalar?.string) == ["machine", "slots"])
        let machine = try #require(top[0].value.mapping)
        #expect(machine[0].value.scalar == Node.Scalar(string: "A1", style: .singleQuoted))
        #expect(machine[1].value.scalar == Node.Scalar(string: "010", style: .plain))  // text, never octal
        #expect(machine[1].value.mark == Mark(line: 3, column: 10))
        let slots = try #require(top[1].value.sequence)
        #expect(slots.map(\.scalar?.style) == [.plain, .doubleQuoted])
        #expect(slots[1].mark == Mark(line: 4, column: 12))
    }

    @Test func textWithoutADocumentIsNil() throws {
        #expect(try YAMLDocument.compose("") == nil)
        #expect(try YAMLDocument.compose("# only a comment\n") == nil)
    }

    @Test func anAliasIsTheAnchoredNode() throws {
        let root = try #require(try YAMLDocument.compose("base: &price 1200\nother: *price\n"))
        #expect(root.mapping?[1].value.scalar?.string == "1200")
    }

    @Test(arguments: [
        ("a: *nowhere\n", YAMLError.undefinedAlias("nowhere", at: Mark(line: 1, column: 4))),
        ("a: 1\nb: 2\na: 3\n", .duplicateKey("a", first: Mark(line: 1, column: 1), second: Mark(line: 3, column: 1))),
        ("{x: 1, y: 2, x: 3}\n", .duplicateKey("x", first: Mark(line: 1, column: 2), second: Mark(line: 1, column: 14))),
        ("a: 1\n---\nb: 2\n", .severalDocuments(at: Mark(line: 2, column: 1))),
        ("a: 1\n\tb: 2\n", .syntax(problem: "found a tab character that violates indentation", at: Mark(line: 2, column: 1))),
        ("a: [1, 2\n", .syntax(problem: "did not find expected ',' or ']'", at: Mark(line: 2, column: 1))),
        ("a: b\u{7}c\n", .syntax(problem: "control characters are not allowed", at: Mark(line: 1, column: 5))),
    ])
    func badTextIsRefusedAtItsPlace(text: String, expected: YAMLError) {
        #expect(throws: expected) { try YAMLDocument.compose(text) }
    }
}
