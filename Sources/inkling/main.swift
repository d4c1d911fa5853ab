import FoundationEssentials
import InklingCore
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

let usage = """
    usage: inkling <command> [options]

    commands:
      suggest TEXT [-n N] [--pack PATH]     suggestions for the text before the cursor
      predict --stdio [options]             typesim line protocol on stdin/stdout
          --pack PATH                       language pack (default: the bundled English pack)
          --no-rerank                       dictionary and word n-grams only (ablation)
          --no-typo-completions             no completions of nearby prefixes (tge → the)
          --learn [--user-file FILE]        learn from commit events (typesim --commit-events);
                                            FILE keeps what was learned between runs (TSV)
          --user-db PATH                    load learned words from a user store (SQLite);
                                            with --learn, save what was learned there at exit
          --char-weight X --next-char-weight X --char-prior-share X
          --cache-weight X --cache-bigram-weight X --window N --savings X
      pack build --prepared DIR -o FILE [--language L] [--name NAME] [--vocabulary N]
                 [--char-table-bytes N] [--hold-out-every N --held-out FILE]
      pack info FILE                        header, sections and metadata of a pack
      config list|get KEY|set KEY VALUE|reset KEY|describe KEY
                                            the input method's settings (GSettings)
      packs list|install LANG|remove LANG|verify [LANG]|update [--manifest-url URL]
                                            downloadable language packs (SHA-256 verified)
      learned list|forget WORD|wipe|export [FILE|-]|import FILE [--db PATH]
                                            the learned words in the user store (see learned -h)
      learn FILE|- [--db PATH] [--pack PATH] learn from your own texts (one document a line)
      check TEXT [--layout qwerty|qwertz|azerty|jcuken]   likely typos in a text
      check-bench --text FILE [--seed N] [--rate R]       checker benchmark: false flags, recall
    """

/// A tiny option reader: `--name value` pairs and flags, positional arguments in order.
struct Arguments {
    var positional: [String] = []
    var options: [String: String] = [:]
    var flags: Set<String> = []
    static let flagNames: Set<String> = ["--stdio", "--no-rerank", "--no-typo-completions", "--learn", "-h", "--help"]

    init(_ arguments: ArraySlice<String>) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            if Self.flagNames.contains(argument) {
                flags.insert(argument)
            } else if argument.hasPrefix("-") && argument.count > 1 {
                guard let value = iterator.next() else { fail("\(argument) needs a value") }
                options[argument] = value
            } else {
                positional.append(argument)
            }
        }
    }

    func double(_ name: String) -> Double? {
        guard let text = options[name] else { return nil }
        guard let value = Double(text) else { fail("\(name) takes a number, not '\(text)'") }
        return value
    }

    func int(_ name: String) -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text) else { fail("\(name) takes a whole number, not '\(text)'") }
        return value
    }
}

func openPack(_ arguments: Arguments) -> LanguagePack {
    let path: String
    if let given = arguments.options["--pack"] {
        path = given
    } else if let found = PackLocator.bundledPack(language: "en", executablePath: PackLocator.currentExecutablePath()) {
        path = found
    } else {
        fail("no bundled English pack found near \(PackLocator.currentExecutablePath()); pass --pack PATH")
    }
    do {
        return try LanguagePack(path: path)
    } catch {
        fail(error.sentence(path: path))
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
    if let value = arguments.int("--learned-window") { options.learnedSuccessorWindow = value }
    if let value = arguments.double("--user-weight") { options.userWeight = value }
    if let value = arguments.double("--savings") { options.savingsExponent = Float(value) }
    return options
}

let all = CommandLine.arguments.dropFirst()
guard let command = all.first else {
    print(usage)
    exit(2)
}
if command == "config" {
    // Its own argument reading: values such as `-1` are values, not options.
    ConfigCommand.run(Array(all.dropFirst()))
    exit(0)
}
let arguments = Arguments(all.dropFirst())

switch command {
case "suggest":
    let predictor = Predictor(pack: openPack(arguments), options: predictorOptions(arguments))
    let text = arguments.positional.joined(separator: " ")
    for word in predictor.suggest(before: text, count: arguments.int("-n") ?? 5) { print(word) }
case "predict":
    guard arguments.flags.contains("--stdio") else { fail("predict needs --stdio") }
    let predictor = Predictor(pack: openPack(arguments), options: predictorOptions(arguments))
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
            fail("\(error)")
        }
    }
    var server = PredictServer(predictor: predictor)
    server.learns = arguments.flags.contains("--learn")
    server.run()
    if let userFile, server.learns {
        // Learned words: 0600 whatever the umask.
        if let problem = PrivateFiles.writeAtomically(Array(UserModelFile.write(predictor.userModel.allEntries).utf8), to: userFile) {
            fail(problem)
        }
    }
    if let userStore, server.learns {
        var changes: [(context: String, key: String, entry: LearnedEntry?)] = []
        predictor.updateUserModel { changes = $0.takeChanges() }
        do {
            try userStore.apply(changes)
        } catch {
            fail("\(error)")
        }
    }
case "learned":
    LearnedCommand.run(arguments)
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
case "-h", "--help", "help":
    print(usage)
default:
    fail("unknown command '\(command)'\n\(usage)", status: 2)
}
