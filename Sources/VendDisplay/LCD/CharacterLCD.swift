import Synchronization
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// Drives the LCD from the machine's views: initialises it, then redraws the rows that changed,
/// a scroll step every `stepInterval`. A failing bus (a loose wire) is reported once and the LCD
/// is initialised again every few seconds until it answers.
public final class CharacterLCD: Sendable {
    private let device: any I2CDevice
    private let controller: HD44780
    private let report: @Sendable (String) -> Void
    private let state = Mutex<(view: MachineView?, step: Int, shown: [String]?, failing: Bool)>((nil, 0, nil, false))
    static let stepInterval: useconds_t = 400_000
    static let retryInterval: useconds_t = 5_000_000

    public init(device: any I2CDevice, columns: Int, rows: Int, report: @escaping @Sendable (String) -> Void) {
        self.device = device
        controller = HD44780(columns: columns, rows: rows)
        self.report = report
    }

    /// Runs `steps` on the device, waiting where they say.
    public static func perform(_ steps: [HD44780.Step], on device: any I2CDevice) throws(I2CError) {
        for step in steps {
            switch step {
            case .write(let bytes): try device.write(bytes)
            case .pause(let duration):
                let (seconds, attoseconds) = duration.components
                usleep(useconds_t(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
            }
        }
    }

    /// Initialises the LCD; throws what the first failure says (no device at the address).
    public func initialise() throws(I2CError) {
        try Self.perform(controller.initialisation, on: device)
    }

    public func show(_ view: MachineView) {
        state.withLock { $0.view = view }
    }

    /// Redraws on a thread of its own: scrolling needs steps even while nothing changes.
    public func start() {
        PosixThread.start(name: "display-lcd") { [self] in
            while true {
                draw()
                usleep(Self.stepInterval)
            }
        }
    }

    /// The steps that bring the LCD from `shown` to `rows`: only the rows that differ.
    func updates(from shown: [String]?, to rows: [String]) -> [HD44780.Step] {
        rows.indices.filter { shown?[$0] != rows[$0] }.map { controller.row($0, rows[$0]) }
    }

    @inline(never)  // kept out of start()'s endless loop, as MachineFollower's connection body
    private func draw() {
        let (view, step, shown, failing) = state.withLock { state in
            defer { state.step &+= 1 }
            return state
        }
        guard let view else { return }
        let rows = LCDFrame.rows(view, columns: controller.columns, rows: controller.rows, step: step)
        do {
            if failing { try initialise() }
            try Self.perform(updates(from: failing ? nil : shown, to: rows), on: device)
            if failing { report("LCD answers again") }
            state.withLock {
                $0.shown = rows
                $0.failing = false
            }
        } catch {
            if !failing { report("LCD: \(error); retrying every \(Self.retryInterval / 1_000_000) s") }
            state.withLock { $0.failing = true }
            usleep(Self.retryInterval)
        }
    }
}
