import VendingCore

/// What the machine asks of a card reader. `item` is the reader's item number of the slot (MDB's
/// 16-bit item number; 0xFFFF when the slot has none).
public enum CardReaderCommand: Sendable, Equatable {
    case requestVend(VendID, price: Money, item: UInt16)
    case cancelVend(VendID)
    case settle(CardSettlement, item: UInt16)
    case endSession
    case cashSale(price: Money, item: UInt16)
    /// The reader's own age verification: check the customer for `age`+ (answered with
    /// `.ageVerified` or `.ageRefused`).
    case checkAge(Int)
    /// The machine's age check ended unanswered: stop asking the customer.
    case cancelAgeCheck
}

/// The card readers as the machine drives them: it hands each a command and goes on (the
/// reader's driver carries it out in its own turn, on its own thread, and answers with inputs).
/// The MDB bus is one implementation; a reader on another protocol is another, and the machine
/// does not change (docs/adding-a-device.md).
public protocol CardReaders: Sendable {
    /// Hands `command` to `reader`'s driver; false when no such reader is configured.
    @discardableResult
    func post(_ command: CardReaderCommand, to reader: CardReader) -> Bool

    /// Hands `command` to every configured reader's driver (a cash sale for their telemetry).
    func postToEveryReader(_ command: CardReaderCommand)

    /// Every reader takes cards, or none does.
    func setCardAcceptance(_ accepting: Bool)

    /// Each configured reader with its state and identity as its driver last described them, for
    /// `vendctl status`.
    var readerStates: [(reader: CardReader, description: String)] { get }
}
