import Foundation
import Testing
import VenddTestSupport

/// `vendd check-config` on this system: a control group that does not exist here would leave
/// nobody but root able to change the machine, so a name the package does not create is an
/// error at its place in the file.
@Suite struct ControlGroupCheckTests {
    @Test func aGroupThatDoesNotExistIsAnErrorAtItsPlace() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sample = try String(contentsOf: repositoryRoot.appendingPathComponent("config/vendd.yaml"), encoding: .utf8)
        let file = directory.path + "/vendd.yaml"
        try sample.replacingOccurrences(of: "  group: vendtech ", with: "  group: vendtehc ").write(toFile: file, atomically: true, encoding: .utf8)
        let line = sample.components(separatedBy: "\n").firstIndex { $0.hasPrefix("  group: vendtech") }! + 1
        let result = try ProcessRun.run(builtProduct("vendd"), ["check-config", file])
        #expect(result.status == 78, "\(result.output)")
        #expect(
            result.errors.hasPrefix(
                "\(file):\(line):10: control.group: no group 'vendtehc' on this system: only root could change the machine (check the name, or create it: groupadd --system vendtehc)\n"
            ), "\(result.errors)")
    }
}
