import ArgumentParser
import VendConfig
import VendFleetStore
import VendPOSIX
import VendText

#if canImport(Glibc)
    import Glibc
#endif

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print each machine's stored sequence and its gaps, from the database.",
        discussion: """
            Reads the database the configuration names (run it as root or as the vendstore user: \
            /var/lib/vendstore is theirs). An SQLite file that does not exist yet is not created: \
            vendstore serve creates it, owned by its user.
            """)

    @OptionGroup var options: ConfigOption

    func run() throws {
        let settings = try options.load()
        try options.requireDatabase(settings)
        let store = try openStore(settings)
        let gaps = Dictionary(grouping: try store.gaps(), by: \.machine)
        var table = TextTable([.left, .right, .right, .left, .left])
        table.add(["machine", "stored", "highest", "gaps", "last commit"])
        for progress in try store.progress() {
            let open = gaps[progress.machine] ?? []
            table.add([
                progress.machine, "\(progress.contiguous)", "\(progress.highest)",
                open.isEmpty ? "-" : open.map { $0.first == $0.last ? "\($0.first)" : "\($0.first)-\($0.last)" }.joined(separator: ", "),
                progress.updatedAt == 0 ? "-" : Self.utc(progress.updatedAt),
            ])
        }
        print(table.render().joined(separator: "\n"))
        let missing = gaps.values.joined().reduce(Int64(0)) { $0 + $1.last - $1.first + 1 }
        print("\(gaps.count) machines with gaps, \(missing) events missing")
    }

    static func utc(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = [CChar](repeating: 0, count: 32)
        strftime(&text, text.count, "%Y-%m-%d %H:%M:%S UTC", &parts)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
