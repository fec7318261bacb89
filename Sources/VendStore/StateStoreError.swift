import VendPOSIX

/// Why the store cannot go on. Every description names the file or directory and says what the
/// technician should do.
public enum StateStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process holds `<directory>/lock`: two daemons on one machine would count money twice.
    case locked(directory: String)
    /// A system call on one of the store's files failed.
    case system(operation: String, path: String, errno: Int32)
    /// The saved state failed a check. It was moved aside and the STATE-LOST marker written.
    case corrupt(file: String, reason: String, movedTo: String)
    /// The STATE-LOST marker from an earlier start is present: a technician has not decided yet.
    case stateLost(marker: String, foundOn: String, movedTo: String)
    /// A snapshot or entry could not be written as JSON (a bug, not a disk problem).
    case encoding(what: String, reason: String)
    /// Used before `restore()`, after `close()`, or after a write failed half-way.
    case notOpen(directory: String)

    public var description: String {
        switch self {
        case .locked(let directory):
            return "\(directory): another vendd is using this state directory (it holds \(directory)/lock); "
                + "stop it first (systemctl stop vendd): two daemons would count the same coins twice"
        case .system(let operation, let path, let code):
            return "\(path): \(operation) failed: \(SystemError.text(code)); check that the file system "
                + "is mounted read-write and not full, and that the vendd user may write there"
        case .corrupt(let file, let reason, let movedTo):
            return "\(file): the saved state is corrupt: \(reason). It was moved to \(movedTo), and vendd will "
                + "not start an empty machine on its own. " + Self.recovery(movedTo: movedTo)
        case .stateLost(let marker, let foundOn, let movedTo):
            return "\(marker): the saved state was found corrupt on \(foundOn) and moved to \(movedTo), and vendd "
                + "will not start an empty machine on its own. " + Self.recovery(movedTo: movedTo)
        case .encoding(let what, let reason):
            return "could not write the \(what) as JSON: \(reason); this is a bug in vendd, please report it with this message"
        case .notOpen(let directory):
            return "\(directory): the state store is not open (not restored yet, closed, or an earlier write "
                + "failed); restart vendd, which restores what was saved"
        }
    }

    private static func recovery(movedTo: String) -> String {
        "Inspect the files in \(movedTo), then either start vendd once with --reset-state, which starts an "
            + "empty machine (credit, stock and sales at zero: count the cash box and restock the machine), "
            + "or put a good backup of state.json and journal.log back into the state directory and delete "
            + "its STATE-LOST file."
    }
}
