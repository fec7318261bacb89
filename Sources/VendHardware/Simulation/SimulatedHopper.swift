import Synchronization
import VendTime
import VendingCore

/// A hopper for `--simulate`: one coin value, a coin every `coinInterval`, a ccTalk-like event
/// counter (1…255, counted once per payout) and the last payout's paid and unpaid coins. Like a
/// real hopper's memory, this survives vendd: it is kept in `memoryFile` (`SimulatedDeviceMemory`),
/// replaced whole at each coin, so a restart after `kill -9` mid-payout finds the counter and what
/// was paid.
public final class SimulatedHopper: PayoutDevice {
    private struct Memory: Equatable {
        var counter: UInt64 = 0
        var coins: Int
        var paid: Int = 0
        var unpaid: Int = 0

        init(coins: Int) { self.coins = coins }

        /// Counter, coins, paid and unpaid, as `fields` gives them.
        init?(fields: [Substring]) {
            let numbers = fields.compactMap { Int($0) }
            guard fields.count == 4, numbers.count == 4, numbers.allSatisfy({ $0 >= 0 }) else { return nil }
            (counter, coins, paid, unpaid) = (UInt64(numbers[0]), numbers[1], numbers[2], numbers[3])
        }

        var fields: [String] { ["\(counter)", "\(coins)", "\(paid)", "\(unpaid)"] }
    }

    private struct State {
        var memory: Memory
        var completion: (@Sendable (PayoutDeviceResult) -> Void)?
        /// What the payout under way was asked to pay.
        var asked: Money?
        var timer: TimerID?
        /// Coins it will refuse to pay (a jam after this many), for `vendctl sim`.
        var jamAfter: Int?
    }

    /// How many coins a simulated hopper holds the first time it is used.
    public static let initialCoins = 60

    public let coin: Money
    public var singleCoin: Money? { coin }
    public let identity: String
    public var description: String { "simulated hopper (\(coin.decimalString) coins)" }
    private let coinInterval: Duration
    private let timekeeper: any Timekeeper
    private let memoryFile: SimulatedDeviceMemory?
    private let state: Mutex<State>

    /// `coins`: what a hopper holds whose `memoryFile` kept nothing yet.
    public init(
        coin: Money, identity: String, coins: Int, coinInterval: Duration = .milliseconds(200),
        memoryFile: SimulatedDeviceMemory?, timekeeper: any Timekeeper
    ) throws(SimulatedDeviceMemory.Unreadable) {
        self.coin = coin
        self.identity = identity
        self.coinInterval = coinInterval
        self.timekeeper = timekeeper
        self.memoryFile = memoryFile
        let kept = try memoryFile?.recall(Memory.init(fields:))
        state = Mutex(State(memory: kept ?? Memory(coins: coins)))
    }

    public func inventory() -> [ChangeStock] {
        [ChangeStock(value: coin, count: state.withLock { $0.memory.coins })]
    }

    public func pay(_ amount: Money, completion: @escaping @Sendable (PayoutDeviceResult) -> Void) {
        let memory = state.withLock { state in
            let wanted = Int(amount.minorUnits / coin.minorUnits)
            state.memory.counter = state.memory.counter % 255 + 1
            state.memory.paid = 0
            state.memory.unpaid = max(0, min(wanted, state.memory.coins))
            state.completion = completion
            state.asked = amount
            return state.memory
        }
        save(memory)
        state.withLock { $0.timer = timekeeper.schedule(after: coinInterval) { [self] in nextCoin() } }
    }

    /// The next coin out, or the end of the payout.
    private func nextCoin() {
        let (memory, asked, finished) = state.withLock { state -> (Memory, Money?, (@Sendable (PayoutDeviceResult) -> Void)?) in
            let jammed = state.jamAfter.map { state.memory.paid >= $0 } ?? false
            if state.memory.unpaid > 0, !jammed {
                state.memory.unpaid -= 1
                state.memory.paid += 1
                state.memory.coins -= 1
            }
            guard state.memory.unpaid == 0 || jammed else {
                state.timer = timekeeper.schedule(after: coinInterval) { [self] in nextCoin() }
                return (state.memory, nil, nil)
            }
            if jammed { state.jamAfter = nil }
            defer { state.completion = nil }
            return (state.memory, state.asked, state.completion)
        }
        save(memory)
        finished?(result(memory: memory, asked: asked))
    }

    /// Its memory says exactly what it paid: the rest of what it was asked is not paid.
    private func result(memory: Memory, asked: Money?) -> PayoutDeviceResult {
        PayoutDeviceResult(.ended(asked ?? coin * (memory.paid + memory.unpaid), paid: coin * memory.paid), counter: memory.counter)
    }

    public func lastPayout() -> LastPayoutReport {
        let memory = state.withLock { $0.memory }
        return LastPayoutReport(
            counter: memory.counter, paid: coin * memory.paid, unpaid: coin * memory.unpaid,
            isUnknown: memory.counter == 0)
    }

    public func emergencyStop() {
        let (memory, asked, finished) = state.withLock { state -> (Memory, Money?, (@Sendable (PayoutDeviceResult) -> Void)?) in
            if let timer = state.timer { timekeeper.cancel(timer) }
            defer { state.completion = nil }
            return (state.memory, state.asked, state.completion)
        }
        finished?(result(memory: memory, asked: asked))
    }

    /// The next payout stops after `coins` coins, as a jammed hopper does.
    public func jam(after coins: Int) {
        state.withLock { $0.jamAfter = coins }
    }

    /// Fills the hopper to `coins`.
    public func refill(to coins: Int) {
        let memory = state.withLock { state in
            state.memory.coins = coins
            return state.memory
        }
        save(memory)
    }

    /// Whole or not at all: a `kill -9` or a power cut mid-write leaves the last memory.
    private func save(_ memory: Memory) {
        memoryFile?.keep(memory.fields)
    }
}
