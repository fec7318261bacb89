import ArgumentParser
import VendControl

/// `vendctl dex clear-pass-code`: the technician's way back when a DDCMP handheld's code is lost.
struct DEXCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dex", abstract: "The DEX port: forget the DDCMP pass code the machine learnt.", subcommands: [ClearPassCode.self])

    struct ClearPassCode: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear-pass-code",
            abstract: "Forget the DDCMP security and pass code (service mode only; recorded with your user name).",
            discussion: """
                A new machine accepts any code; the first DDCMP handheld that sends a non-zero one sets it, and from then on only \
                that code reads (EVA-DTS 6.1.1 §6.1.6). After this command the machine accepts any code again and learns the next \
                non-zero one. `vendctl status` says whether a code is kept.
                """)
        @OptionGroup var connection: Connection
        func run() throws { try send(.dexClearPassCode, connection) }
    }
}
