/// The machine's state as persisted: an explicit schema version, so a newer daemon can tell an
/// older file from a corrupt one.
public struct MachineSnapshot: Hashable, Sendable, Codable {
    public static let currentSchemaVersion = 1

    public let schemaVersion: Int
    public let machine: Machine

    public init(_ machine: Machine) {
        schemaVersion = Self.currentSchemaVersion
        self.machine = machine
    }
}
