import Synchronization
import VendHardware
import VendingCore

/// One reader's link between the machine's thread and the bus thread: commands wait here for
/// the bus thread's next turn, and the reader's state is kept here for `vendctl status`.
public final class CardReaderMailbox: Sendable {
    public let reader: CardReader
    private let state = Mutex(Contents())

    private struct Contents {
        var commands: [CardReaderCommand] = []
        var accepting = false
        var status = "not initialised"
    }

    init(reader: CardReader) { self.reader = reader }

    func post(_ command: CardReaderCommand) { state.withLock { $0.commands.append(command) } }

    func takeCommands() -> [CardReaderCommand] {
        state.withLock { contents in
            defer { contents.commands.removeAll() }
            return contents.commands
        }
    }

    /// Settlements waiting since start: the reader must hear them before any RESET.
    var hasSettlements: Bool {
        state.withLock { $0.commands.contains { if case .settle = $0 { true } else { false } } }
    }

    /// Whether the machine wants cards taken now.
    var accepting: Bool {
        get { state.withLock { $0.accepting } }
        set { state.withLock { $0.accepting = newValue } }
    }

    /// The reader's state and identity, as its driver last described them.
    public var status: String { state.withLock { $0.status } }

    func describe(_ status: String) { state.withLock { $0.status = status } }
}
