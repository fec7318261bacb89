import VendControl
import VendDrivers
import VendHardware

/// What vendd knows of its hardware's health: the last thing the coin acceptor said (a fault
/// makes it unhealthy until it reports something else, such as a reconnect) and the last GPIO or
/// relay fault (unhealthy until the hardware is brought up again, at a reload or restart).
struct HardwareHealth {
    private var coinNotice: (text: String, isFault: Bool, at: Int64)?
    private var gpioFault: (text: String, at: Int64)?

    mutating func record(_ notice: HardwareNotice, at: Int64) {
        switch notice {
        case .coinAcceptor(let text, let isFault), .paymentDevice(let text, let isFault): coinNotice = (text, isFault, at)
        case .fault(let text): gpioFault = (text, at)
        case .relayCutByMaximumOnTime(let slot, _, let limit):
            gpioFault = ("relay of slot \(slot) had to be cut by its \(limit.wholeMilliseconds) ms limit", at)
        case .motorCutByGuard(let slot, let limit):
            gpioFault = ("motor of slot \(slot) had to be cut by its \(limit.wholeMilliseconds) ms guard", at)
        default: break
        }
    }

    /// Hardware that is not running (between a failed reload and a restart) is not healthy.
    func report(gpio: String?, coinAcceptor: String?) -> StatusReport.Health {
        StatusReport.Health(
            gpio: .init(
                ok: gpio != nil && gpioFault == nil, description: gpio ?? "stopped",
                notice: gpioFault?.text, noticeAt: gpioFault?.at),
            coinAcceptor: .init(
                ok: coinAcceptor != nil && coinNotice?.isFault != true,
                description: coinAcceptor ?? "stopped",
                notice: coinNotice?.text, noticeAt: coinNotice?.at))
    }
}
