import ArgumentParser
import VendText

/// "vendctl stauts": a command name that is one typo from a real one gets that one suggested,
/// before the argument parser answers with "Unexpected argument".
enum CommandSuggestion {
    /// The message for a misspelt command or subcommand in `arguments` (the command line without
    /// the program), or nil when there is none to suggest.
    static func message(for arguments: [String]) -> String? {
        // Names, not command types: the tree is read once, by name.
        var names = subcommandNames(of: Vendctl.self)
        var current: [String] = []
        var path = ["vendctl"]
        var remaining = arguments[...]
        while let word = nextPositional(&remaining) {
            if names.contains(word) {
                current.append(word)
                path.append(word)
                names = subcommandNames(at: current)
                // Past a leaf command, positionals are its arguments.
                if names.isEmpty { return nil }
                continue
            }
            guard !names.isEmpty, word != "help", let nearest = closestMatch(to: word, among: names) else { return nil }
            let where_ = path.joined(separator: " ")
            return "unknown command '\(word)' for \(where_); did you mean '\(nearest)'? (\(where_) --help lists them)"
        }
        return nil
    }

    private static func subcommandNames(of command: ParsableCommand.Type) -> [String] {
        var names: [String] = []
        for subcommand in command.configuration.subcommands { names.append(subcommand._commandName) }
        return names
    }

    /// The names under `path` (command names from the top).
    private static func subcommandNames(at path: [String]) -> [String] {
        var command: ParsableCommand.Type = Vendctl.self
        for name in path {
            var found: ParsableCommand.Type?
            for subcommand in command.configuration.subcommands where subcommand._commandName == name { found = subcommand }
            guard let next = found else { return [] }
            command = next
        }
        return subcommandNames(of: command)
    }

    /// Options that take a value: those every command shares, and the argument parser's own
    /// (`--generate-completion-script bash`, which the Debian package runs, is not a command).
    private static let valueOptions: Set<String> = ["--socket", "--timeout", "--generate-completion-script"]

    /// The next word that is not an option (nor the value of a shared option).
    private static func nextPositional(_ words: inout ArraySlice<String>) -> String? {
        while let word = words.popFirst() {
            if valueOptions.contains(word) {
                _ = words.popFirst()
                continue
            }
            if word.hasPrefix("-") { continue }
            return word
        }
        return nil
    }
}
