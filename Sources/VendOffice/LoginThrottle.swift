/// Failed logins counted per user name and per client address over a window: past the limit,
/// further attempts are refused without checking the password until the window has passed.
/// In memory, per vendstore process. Bounded: past `capacity` keys it forgets expired ones, and
/// if none has expired it refuses new keys (a flood of names cannot grow it without end).
struct LoginThrottle {
    struct Limits {
        var perUser = 5
        var perAddress = 20
        var windowMilliseconds: Int64 = 15 * 60 * 1000
        var capacity = 10_000
    }

    private struct Window {
        var failures: Int
        var start: Int64
    }

    let limits: Limits
    private var users: [String: Window] = [:]
    private var addresses: [String: Window] = [:]

    init(limits: Limits = Limits()) { self.limits = limits }

    /// Why an attempt for `user` from `address` is refused now; nil when it may go on.
    mutating func refusal(user: String, address: String, now: Int64) -> String? {
        if Self.count(addresses, address, now, limits) >= limits.perAddress { return "too many failed logins from this address" }
        if Self.count(users, user, now, limits) >= limits.perUser { return "too many failed logins for this user" }
        if !Self.room(&addresses, address, now, limits) || !Self.room(&users, user, now, limits) {
            return "too many failed logins: try again later"
        }
        return nil
    }

    mutating func failed(user: String, address: String, now: Int64) {
        Self.add(&users, user, now, limits)
        Self.add(&addresses, address, now, limits)
    }

    /// A success forgets the user's failures (the address's stay: one address trying many names).
    mutating func succeeded(user: String) { users[user] = nil }

    private static func count(_ table: [String: Window], _ key: String, _ now: Int64, _ limits: Limits) -> Int {
        guard let window = table[key], now - window.start < limits.windowMilliseconds else { return 0 }
        return window.failures
    }

    private static func add(_ table: inout [String: Window], _ key: String, _ now: Int64, _ limits: Limits) {
        if let window = table[key], now - window.start < limits.windowMilliseconds {
            table[key] = Window(failures: window.failures + 1, start: window.start)
        } else {
            table[key] = Window(failures: 1, start: now)
        }
    }

    /// Whether `key` has or can get a place in `table`.
    private static func room(_ table: inout [String: Window], _ key: String, _ now: Int64, _ limits: Limits) -> Bool {
        guard table[key] == nil, table.count >= limits.capacity else { return true }
        let window = limits.windowMilliseconds
        table = table.filter { now - $0.value.start < window }
        return table.count < limits.capacity
    }
}
