import Synchronization
import VendingCore

/// Someone waiting for the machine to be quiet (no vend, no payout in flight…).
struct QuietWaiter: Sendable {
    let isQuiet: @Sendable (Machine) -> Bool
    let wake: @Sendable () -> Void
}

/// Reload and shutdown: drain through the inbox, then wait until what is in flight has ended.
extension MachineController {
    /// Reload and shutdown: from here on in the inbox's order nothing new starts (no vend, coin
    /// or payout; `Input.setDraining`), then waits until no vend — and, with `payouts`, no payout
    /// — is in flight. False if `limit` passed first. `setDraining(false)` ends it.
    @discardableResult
    func drain(waitingFor limit: Duration, payouts: Bool = false) async -> Bool {
        sendAndWait(.setDraining(true))
        return await waitUntilQuiet(limit: limit) { $0.pendingVend == nil && (!payouts || $0.pendingPayout == nil) }
    }

    /// Waits until `isQuiet` holds of the machine; false if `limit` passed first. No polling:
    /// each input carried out checks the waiters.
    func waitUntilQuiet(limit: Duration, _ isQuiet: @escaping @Sendable (Machine) -> Bool) async -> Bool {
        let once = Mutex(false)
        let claim: @Sendable () -> Bool = {
            once.withLock { claimed in
                defer { claimed = true }
                return !claimed
            }
        }
        return await withCheckedContinuation { continuation in
            let timer = timekeeper.schedule(after: limit) {
                if claim() { continuation.resume(returning: false) }
            }
            let quiet: @Sendable () -> Void = { [timekeeper] in
                timekeeper.cancel(timer)
                if claim() { continuation.resume(returning: true) }
            }
            let already = onLane { state in
                if isQuiet(state.machine) { return true }
                state.quietWaiters.append(QuietWaiter(isQuiet: isQuiet, wake: quiet))
                return false
            }
            if already { quiet() }
        }
    }
}
