import InklingCommandLine

/// The helper's command line: `inkling-dictate [--device NAME] [--model-dir DIR]`, plus, for
/// tests and the benchmark, `--audio-file WAV` (read a 16 kHz mono WAV instead of the sound
/// server, paced like a microphone) and `--fast` (read it as fast as possible).
struct Options: Equatable, Sendable {
    var audioFile: String?
    var fast = false
    var device: String?
    var model = RecognizerModel.debianEnglish

    static let command: CommandSpec = {
        var command = CommandSpec(
            ["inkling-dictate"],
            synopsis: "[--device NAME] [--hmm DIR --dict FILE --lm FILE] [--audio-file WAV [--fast]]",
            summary:
                "The dictation helper of the Inkling input method, started by the engine: JSON lines on standard input and output, speech recognised on this machine (PocketSphinx). Audio never leaves the machine and nothing heard is written anywhere.",
            options: [
                OptionSpec(
                    "--device", value: "NAME",
                    help: "the sound server's source to record from (default: the default source)"),
                OptionSpec(
                    "--hmm", value: "DIR", help: "PocketSphinx acoustic model directory (default: Debian's en-us)"),
                OptionSpec(
                    "--dict", value: "FILE", help: "pronunciation dictionary (default: Debian's cmudict-en-us.dict)"),
                OptionSpec("--lm", value: "FILE", help: "language model (default: Debian's en-us.lm.bin)"),
                OptionSpec(
                    "--audio-file", value: "WAV",
                    help: "read this 16 kHz mono 16-bit WAV instead of the sound server (tests)"),
                OptionSpec("--fast", help: "with --audio-file: do not pace the file like a microphone"),
            ])
        command.quotesArguments = false
        return command
    }()

    /// The usage lines and where to find more (printed with every usage error).
    static var usage: String { command.usage + "\nRun 'inkling-dictate --help' for more." }

    enum ParseError: Error, Equatable {
        case usage(String)
        case help
        case version
    }

    static func parse(_ arguments: [String]) throws(ParseError) -> Options {
        let invocation: Invocation
        do {
            invocation = try command.parse(arguments)
        } catch {
            throw .usage(error.message)
        }
        let parsed: ParsedArguments
        switch invocation {
        case .help: throw .help
        case .version: throw .version
        case .run(let result): parsed = result
        }
        var options = Options()
        options.audioFile = parsed.value("--audio-file")
        options.fast = parsed.has("--fast")
        if options.fast && options.audioFile == nil { throw .usage("--fast needs --audio-file") }
        options.device = parsed.value("--device")
        if let hmm = parsed.value("--hmm") { options.model.acousticModel = hmm }
        if let dict = parsed.value("--dict") { options.model.dictionary = dict }
        if let lm = parsed.value("--lm") { options.model.languageModel = lm }
        return options
    }
}
