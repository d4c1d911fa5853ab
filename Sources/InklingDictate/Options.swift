import InklingCommandLine

/// The helper's command line: `inkling-dictate [--device NAME] [--model-dir DIR]`, plus, for
/// tests and the benchmark, `--audio-file WAV` (read a 16 kHz mono WAV instead of the sound
/// server, paced like a microphone) and `--fast` (read it as fast as possible).
struct Options: ProgramOptions, Equatable, Sendable {
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

    init() {}

    init(_ parsed: ParsedArguments) throws(UsageError) {
        audioFile = parsed.value("--audio-file")
        fast = parsed.has("--fast")
        if fast && audioFile == nil { throw Self.usageError("--fast needs --audio-file") }
        device = parsed.value("--device")
        if let hmm = parsed.value("--hmm") { model.acousticModel = hmm }
        if let dict = parsed.value("--dict") { model.dictionary = dict }
        if let lm = parsed.value("--lm") { model.languageModel = lm }
    }
}
