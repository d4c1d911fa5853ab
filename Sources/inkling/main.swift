import FoundationEssentials
import InklingCommandLine
import InklingCore
import InklingGettext
import InklingStore

#if canImport(Glibc)
    import Glibc
#endif

/// Writes to standard error (logs never go to stdout, which carries protocol replies).
func warn(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
}

func fail(_ message: String, status: Int32 = 1) -> Never {
    warn("inkling: \(message)")
    exit(status)
}

/// One command line, read against `Commands` by the shared parser. The body of each command
/// reads it as before: positional arguments (the subcommand first, for commands that have
/// them), option values and flags under every name of their option.
struct Arguments {
    let parsed: ParsedArguments
    var positional: [String]
    var options: [String: String] { parsed.values }
    var flags: Set<String> { parsed.flags }

    init(_ parsed: ParsedArguments) {
        self.parsed = parsed
        // `inkling learned list …`: the bodies dispatch on "list" as their first argument.
        positional = (parsed.command.path.count > 2 ? [parsed.command.path[2]] : []) + parsed.positional
    }

    /// A number option (its range was checked when the command line was read).
    func double(_ name: String) -> Double? {
        guard let text = options[name] else { return nil }
        guard let value = Double(text), value.isFinite else {
            usageError(tr("{option} takes a number, not '{value}'", ["option": name, "value": text]))
        }
        return value
    }

    /// A whole-number option (its range was checked when the command line was read).
    func int(_ name: String) -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text) else {
            usageError(tr("{option} takes a whole number, not '{value}'", ["option": name, "value": text]))
        }
        return value
    }

    /// Exits with status 2: the sentence, the command's usage and where to find more.
    func usageError(_ message: String) -> Never {
        Terminal.exitWithUsageError(UsageError(message, command: parsed.command))
    }
}

func openPack(_ arguments: Arguments) -> LanguagePack {
    let path: String
    if let given = arguments.options["--pack"] {
        path = given
    } else if let found = PackLocator.bundledPack(language: "en", executablePath: PackLocator.currentExecutablePath()) {
        path = found
    } else {
        fail(
            tr(
                "no bundled English pack found near {path}; pass --pack PATH",
                ["path": PackLocator.currentExecutablePath()]))
    }
    return openPack(path: path)
}

/// Opens a pack file, or exits with one sentence naming the file and what is wrong with it.
func openPack(path: String) -> LanguagePack {
    // Why a file cannot be read, in the system's words (before the pack reader's own report).
    if let problem = FileAccess.reading(path) {
        fail(tr("cannot read the language pack {path}: {problem}", ["path": path, "problem": problem]))
    }
    do {
        return try LanguagePack(path: path)
    } catch {
        let text = "\(error)"
        fail(
            text.contains(path)
                ? text : tr("the language pack {path} cannot be used: {problem}", ["path": path, "problem": text]))
    }
}

/// Problems with files, as one short phrase from the system (`No such file or directory`).
enum FileAccess {
    /// Why `path` cannot be opened and read as a regular file, or nil when it can.
    static func reading(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return String(cString: strerror(errno)) }
        if status.st_mode & S_IFMT == S_IFDIR { return String(cString: strerror(EISDIR)) }
        return nil
    }

    /// The whole file, or exits with one sentence naming it.
    static func contents(_ path: String) -> [UInt8] {
        if let problem = reading(path) { fail(cannotRead(path, problem)) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { fail(cannotRead(path, String(cString: strerror(errno)))) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = read(descriptor, &buffer, buffer.count)
            if got < 0, errno == EINTR { continue }
            if got < 0 { fail(cannotRead(path, String(cString: strerror(errno)))) }
            if got == 0 { break }
            bytes += buffer[0..<got]
        }
        return bytes
    }

    /// "cannot read PATH: PROBLEM" in the user's language.
    static func cannotRead(_ path: String, _ problem: String) -> String {
        tr("cannot read {path}: {problem}", ["path": path, "problem": problem])
    }
}

func predictorOptions(_ arguments: Arguments) -> PredictorOptions {
    var options = PredictorOptions()
    if arguments.flags.contains("--no-rerank") { options.useCharacterModel = false }
    if arguments.flags.contains("--no-typo-completions") { options.typoTolerantCompletions = false }
    if let value = arguments.double("--char-weight") { options.characterWeight = Float(value) }
    if let value = arguments.double("--next-char-weight") { options.nextWordCharacterWeight = Float(value) }
    if let value = arguments.double("--char-prior-share") { options.characterPriorShare = Float(value) }
    if let value = arguments.double("--cache-weight") { options.cacheWeight = value }
    if let value = arguments.double("--cache-bigram-weight") { options.cacheBigramWeight = value }
    if let value = arguments.int("--window") { options.windowSize = value }
    if let value = arguments.int("--next-window") { options.nextWordWindowSize = value }
    if let value = arguments.int("--proposals") { options.nextWordProposals = value }
    if let value = arguments.int("--learned-window") { options.learnedSuccessorWindow = value }
    if let value = arguments.double("--user-weight") { options.userWeight = value }
    if let value = arguments.double("--savings") { options.savingsExponent = Float(value) }
    return options
}

Gettext.start()
let parsed = Terminal.parse(
    Array(CommandLine.arguments.dropFirst()), with: Commands.inkling, version: InklingVersion.current)
let arguments = Arguments(parsed)

switch parsed.command.path[1] {
case "config":
    ConfigCommand.run(arguments.positional)
case "suggest":
    let predictor = Predictor(pack: openPack(arguments))
    if !arguments.flags.contains("--no-learned") {
        LearnedCommand.loadLearnedWords(into: predictor, explicitPath: arguments.options["--db"])
    }
    let text = arguments.positional.joined(separator: " ")
    for word in predictor.suggest(before: text, count: arguments.int("-n") ?? 5) { print(word) }
case "predict":
    guard arguments.flags.contains("--stdio") else { arguments.usageError(tr("predict needs --stdio")) }
    let predictor = Predictor(pack: openPack(arguments), options: predictorOptions(arguments))
    if arguments.flags.contains("--no-rerank") || arguments.flags.contains("--no-neural") {
        predictor.reranker = nil  // the pack's neural re-ranker (--no-rerank drops the character model too)
    }
    let userFile = arguments.options["--user-file"]
    if let userFile, FileManager.default.fileExists(atPath: userFile) {
        let entries = UserModelFile.read(PackCommand.read(userFile))
        predictor.updateUserModel { $0.load(entries) }
    }
    let userStore = arguments.options["--user-db"].map(LearnedCommand.openStore)
    if let userStore {
        do {
            let entries = try userStore.loadAll()
            predictor.updateUserModel { $0.load(entries) }
        } catch {
            fail(
                tr(
                    "cannot read the learned words in {path}: {problem}",
                    ["path": arguments.options["--user-db"] ?? "", "problem": "\(error)"]))
        }
    }
    var server = PredictServer(predictor: predictor)
    server.learns = arguments.flags.contains("--learn")
    if let path = ProcessInfo.processInfo.environment["INKLING_PREDICT_TIMINGS"] {
        server.timings = fopen(path, "w")
    }
    server.run()
    if let timings = server.timings { fclose(timings) }
    if let userFile, server.learns {
        // Learned words: 0600 whatever the umask.
        if let problem = PrivateFiles.writeAtomically(
            Array(UserModelFile.write(predictor.userModel.allEntries).utf8), to: userFile)
        {
            fail(problem)
        }
    }
    if let userStore, server.learns {
        var changes: [(context: String, key: String, entry: LearnedEntry?)] = []
        predictor.updateUserModel { changes = $0.takeChanges() }
        do {
            try userStore.apply(changes)
        } catch {
            fail(
                tr(
                    "cannot save the learned words to {path}: {problem}",
                    ["path": arguments.options["--user-db"] ?? "", "problem": "\(error)"]))
        }
    }
case "learned":
    LearnedCommand.run(arguments)
case "dictation":
    DictationCommand.run(arguments)
case "learn":
    LearnedCommand.learn(arguments)
case "pack":
    PackCommand.run(arguments)
case "packs":
    PacksCommand.run(arguments)
case "check":
    CheckCommand.check(arguments)
case "check-bench":
    CheckCommand.bench(arguments)
case "account":
    AccountCommand.run(arguments)
default:
    arguments.usageError(tr("unknown command '{name}'", ["name": parsed.command.path[1]]))
}
