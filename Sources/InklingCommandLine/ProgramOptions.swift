/// A helper program's own options, read from its command line (`inkling-cloud`, `inkling-dictate`).
///
/// Each program describes its command line once (`command`) and turns the checked arguments into
/// its own values (`init(_:)`); reading the command line, `--help`, `--version` and usage errors
/// are handled here, alike for all (`Terminal.parse(_:as:version:reportUsage:)`).
public protocol ProgramOptions {
    /// The command line's description (shared conventions: `--help`, `--version`, exit status 2).
    static var command: CommandSpec { get }
    /// Reads the options the parser has checked; throws a usage error about their values.
    init(_ parsed: ParsedArguments) throws(UsageError)
}

extension ProgramOptions {
    /// A usage error about this program's command line.
    public static func usageError(_ message: String) -> UsageError { UsageError(message, command: command) }

    /// Reads a command line that runs the program (tests; a program calls `Terminal.parse`, which
    /// also answers `--help` and `--version`). Here those two are usage errors.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Self {
        switch try command.parse(arguments) {
        case .run(let parsed): return try Self(parsed)
        case .help, .version: throw usageError("--help and --version do not run the program")
        }
    }
}
