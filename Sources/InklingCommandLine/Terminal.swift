#if canImport(Glibc)
    import Glibc
#endif

/// What the three executables share for talking to the terminal: help, version, usage errors.
public enum Terminal {
    /// Writes all of `text` to a file descriptor (retrying short writes and EINTR).
    public static func write(_ text: String, to descriptor: Int32) {
        _ = writeAll(Array(text.utf8), to: descriptor)
    }

    /// Writes all of `bytes` (retrying short writes and EINTR); false when the descriptor took
    /// no more (closed pipe, error).
    public static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
    }

    /// Standard error.
    public static func error(_ text: String) { write(text, to: 2) }

    /// Reads the command line; prints help or the version and exits 0, or prints a usage error
    /// and exits 2; otherwise returns the parsed arguments.
    public static func parse(_ arguments: [String], with spec: CommandSpec, version: String) -> ParsedArguments {
        parse(arguments, with: spec, version: version, reportUsage: { error($0.report) }, read: { $0 })
    }

    /// Reads a helper program's command line into its own options, as `parse(_:with:version:)`
    /// does; `reportUsage` says where a usage error goes (a helper's log, which is the journal
    /// when the engine discarded its stderr) before the exit with status 2.
    public static func parse<Options: ProgramOptions>(
        _ arguments: [String], as type: Options.Type, version: String, reportUsage: (UsageError) -> Void
    ) -> Options {
        parse(arguments, with: Options.command, version: version, reportUsage: reportUsage) {
            (parsed) throws(UsageError) in try Options(parsed)
        }
    }

    /// The one way every program reads its command line: help (exit 0, stdout), version (exit 0,
    /// stdout), a usage error from the parser or from `read` (`reportUsage`, exit 2), or the result
    /// of `read`.
    static func parse<Result>(
        _ arguments: [String], with spec: CommandSpec, version: String, reportUsage: (UsageError) -> Void,
        read: (ParsedArguments) throws(UsageError) -> Result
    ) -> Result {
        do {
            switch try spec.parse(arguments) {
            case .help(let command):
                write(command.helpText, to: 1)
                exit(0)
            case .version:
                write("\(spec.path.first ?? "") \(version)\n", to: 1)
                exit(0)
            case .run(let parsed):
                return try read(parsed)
            }
        } catch {
            reportUsage(error)
            exit(2)
        }
    }

    /// Prints a usage error (sentence, usage, hint) on standard error and exits with status 2.
    public static func exitWithUsageError(_ problem: UsageError) -> Never {
        error(problem.report)
        exit(2)
    }

    /// Whether standard input is a terminal (a person can answer a question).
    public static var inputIsTerminal: Bool { isatty(0) != 0 }

    /// Asks a yes/no question on standard error and reads the answer from standard input;
    /// only "y" or "yes" (any case) is yes.
    public static func confirm(_ question: String) -> Bool {
        error(question + " [y/N] ")
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 64, read(0, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        let answer = String(decoding: line, as: UTF8.self).lowercased().filter { !$0.isWhitespace }
        return answer == "y" || answer == "yes"
    }
}
