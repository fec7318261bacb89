import Synchronization
import VendConfig
import VendHardware
import VendingCore

/// A two-slot machine: A1 with a drop sensor, A2 without; a coin-return and a service key.
enum HardwareFixtures {
    static let yaml = """
        machine:
          currency: { code: KRW, minor_digits: 0, format: "{amount}원" }
          maximum_credit: 10000
        gpio:
          chip: sim
          debounce_ms: 20
        products:
          - { id: cola, name: Cola, category: [soda] }
        slots:
          - id: A1
            product: cola
            price: 1000
            capacity: 5
            button: { line: 1, active_low: true, bias: pull-up }
            relay: { line: 10, pulse_ms: 100, max_on_ms: 400 }
            drop_sensor: { line: 20, window_ms: 500 }
          - id: A2
            product: cola
            price: 1000
            capacity: 5
            button: { line: 2 }
            relay: { line: 11, pulse_ms: 50 }
        buttons:
          - { action: coin-return, line: 3 }
          - { action: service-mode, line: 4 }
        coin_acceptor:
          port: /dev/null
          protocol: bytecode
          channels:
            - { channel: 1, value: 500 }
            - { channel: 2, value: 100, enabled: false }
        """

    static func config() throws -> VenddConfig {
        try ConfigLoader.parse(yaml, file: "hardware-test.yaml")
    }
}

/// Collects what a hardware component reports, for assertions.
final class NoticeLog: Sendable {
    private let storage = Mutex<[HardwareNotice]>([])
    var all: [HardwareNotice] { storage.withLock { $0 } }
    func record(_ notice: HardwareNotice) { storage.withLock { $0.append(notice) } }
}

/// Collects vend outcomes reported by the dispenser.
final class OutcomeLog: Sendable {
    private let storage = Mutex<[VendOutcome]>([])
    var all: [VendOutcome] { storage.withLock { $0 } }
    var record: Dispenser.Completion { { outcome in self.storage.withLock { $0.append(outcome) } } }
}

/// Collects what the input panel reports.
final class PanelLog: Sendable {
    private let storage = Mutex<[DeviceReport]>([])
    var all: [DeviceReport] { storage.withLock { $0 } }
    var record: DeviceReportHandler { { report in self.storage.withLock { $0.append(report) } } }
}
