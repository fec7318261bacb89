import Synchronization
import VendSettings

/// The spiral motors' row and column lines: the motor at a crossing turns while its row and its
/// column are both energised. One motor at a time (the supply is sized for one, and the shared
/// home line can only tell about one). The order is fixed: **energise the row, then the
/// column; release the column, then the row**. The column line switches the motor's current,
/// so the row is never switched under load, and the row (the side the home switches are bussed
/// on) is selected before the motor moves and deselected only after it stopped.
public final class MotorMatrix: Sendable {
    private let rows: any GPIOOutputGroup
    private let columns: any GPIOOutputGroup
    private let energised = Mutex<(row: Int, column: Int)?>(nil)

    /// Requests every row and column line, inactive.
    public init(chip: any GPIOChipBackend, config: MotorMatrixConfig) throws(GPIOError) {
        rows = try chip.requestOutputs(config.rows, consumer: "vendd")
        do throws(GPIOError) {
            columns = try chip.requestOutputs(config.columns, consumer: "vendd")
        } catch {
            rows.release()
            throw error
        }
    }

    /// Turns the motor at (`row`, `column`) on: the row, then the column. Refused while another
    /// motor is on; on a failure nothing is left energised.
    public func energise(row: Int, column: Int) throws(GPIOError) {
        try energised.withLock { energised throws(GPIOError) in
            if let busy = energised {
                throw .ioFailure("motor matrix: row \(busy.row + 1), column \(busy.column + 1) is still on", origin: nil)
            }
            do throws(GPIOError) {
                try rows.set(row, active: true)
                try columns.set(column, active: true)
            } catch {
                try? columns.set(column, active: false)
                try? rows.set(row, active: false)
                throw error
            }
            energised = (row, column)
        }
    }

    /// Turns the motor that is on off: the column, then the row. If a line cannot be written,
    /// every line is released (inactive).
    public func release() {
        energised.withLock { energised in
            guard let (row, column) = energised else { return }
            energised = nil
            do {
                try columns.set(column, active: false)
                try rows.set(row, active: false)
            } catch {
                columns.release()
                rows.release()
            }
        }
    }

    /// Every line inactive and given back: the columns first, for the same reason.
    public func releaseAll() {
        energised.withLock { $0 = nil }
        columns.release()
        rows.release()
    }
}
