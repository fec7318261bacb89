import VendSettings

/// The control groups against the system the file is checked on: a group that does not exist
/// here leaves nobody but root able to change the machine (or the display unable to send a
/// customer's choice). The parser cannot know the system; `vendd check-config` and start-up ask.
extension VenddConfig {
    public struct GroupProblems: Sendable, Equatable {
        /// A group the file names that does not exist: at its place in the file.
        public var errors: [ConfigDiagnostic] = []
        /// The package's own groups missing (not installed from the package yet): said, not refused.
        public var notes: [String] = []
    }

    /// The errors as the file's configuration error; nil when there are none.
    public func controlGroupError(_ problems: GroupProblems) -> ConfigError? {
        problems.errors.isEmpty ? nil : ConfigError(file: file, diagnostics: problems.errors)
    }

    /// `groupExists` looks a group name up on this system (getgrnam).
    public func controlGroupProblems(groupExists: (String) -> Bool) -> GroupProblems {
        var problems = GroupProblems()
        let groups = [
            ("group", control.group, Defaults.control.group, "only root could change the machine"),
            ("customer_group", control.customerGroup, Defaults.control.customerGroup, "the display could not send a customer's choice"),
        ]
        for (key, name, packaged, consequence) in groups where !groupExists(name) {
            if name == packaged {
                problems.notes.append(
                    "control.\(key): the group '\(name)' does not exist on this system yet: installing the vendd package creates it; until then \(consequence)"
                )
                continue
            }
            let location = control.groupLocations[key] ?? SourceLocation(file: file, line: 1, column: 1)
            problems.errors.append(
                ConfigDiagnostic(
                    location: location, path: "control.\(key)",
                    message: "no group '\(name)' on this system: \(consequence) (check the name, or create it: groupadd --system \(name))"))
        }
        return problems
    }
}
