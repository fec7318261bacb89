import ArgumentParser
import VendFleetStore
import VendOffice
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// `vendstore user add|remove|list`: the back office's users, in the database the file names.
struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Add, remove or list the back office's users (docs/office.md).",
        subcommands: [Add.self, Remove.self, List.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a user; the password is read from the terminal (twice, not shown) or from stdin's first line.",
            discussion: "Never on the command line: other users see a process's arguments. At least 10 characters, stored as an Argon2id hash.")

        @OptionGroup var options: ConfigOption
        @Argument(help: "The user's name (letters, digits, '-', '_', '.', '@').") var name: String
        @Option(help: "operator (everything) or driver (fleet, routes' pick lists; no prices, routes or par levels).") var role: String

        func run() throws {
            guard let role = OfficeRole.named(role) else {
                throw ValidationError("--role \(role): say operator or driver")
            }
            let settings = try options.load()
            try options.requireDatabase(settings)
            let password = try readPassword(for: name)
            try Sodium.start()
            do {
                try openSQL(settings.database).records.addUser(name, role: role, password: password, now: WallClock.milliseconds)
            } catch let refusal as OfficeRecords.Refusal {
                StandardError.write("vendstore: \(refusal)\n")
                throw ExitCode.failure
            }
            print("added \(name) (\(role.rawValue))")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user and end their sessions.")

        @OptionGroup var options: ConfigOption
        @Argument var name: String

        func run() throws {
            let settings = try options.load()
            try options.requireDatabase(settings)
            guard try openSQL(settings.database).records.removeUser(name, now: WallClock.milliseconds) else {
                StandardError.write("vendstore: no user '\(name)' (vendstore user list shows them)\n")
                throw ExitCode.failure
            }
            print("removed \(name)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the users and their roles.")

        @OptionGroup var options: ConfigOption

        func run() throws {
            let settings = try options.load()
            try options.requireDatabase(settings)
            for user in try openSQL(settings.database).records.users() { print("\(user.name)\t\(user.role.rawValue)") }
        }
    }
}

extension FleetSQL {
    fileprivate var records: OfficeRecords { OfficeRecords(self) }
}

/// From a terminal: asked twice on stderr with echo off. Otherwise stdin's first line.
private func readPassword(for name: String) throws -> String {
    guard isatty(STDIN_FILENO) == 1 else {
        guard let line = readLine(strippingNewline: true) else {
            throw ValidationError("no password on stdin: pipe it in, or run from a terminal to be asked")
        }
        return line
    }
    func ask(_ prompt: String) -> String {
        StandardError.write(prompt)
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            StandardError.write("\n")
        }
        return readLine(strippingNewline: true) ?? ""
    }
    let first = ask("Password for \(name): ")
    guard ask("Again: ") == first else { throw ValidationError("the two passwords differ: nothing was changed") }
    return first
}
