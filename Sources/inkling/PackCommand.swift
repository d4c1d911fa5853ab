import FoundationEssentials
import InklingCore

/// `inkling pack …`: build and inspect language packs.
enum PackCommand {
    static func run(_ arguments: Arguments) {
        switch arguments.positional.first {
        case "build": build(arguments)
        case "info": info(arguments)
        default: fail(tr("pack needs 'build' or 'info'"))
        }
    }

    static func read(_ path: String) -> String {
        String(decoding: FileAccess.contents(path), as: UTF8.self)
    }

    static func build(_ arguments: Arguments) {
        guard let folder = arguments.options["--prepared"], let output = arguments.options["-o"] else {
            arguments.usageError("pack build needs --prepared DIR and -o FILE")
        }
        func optional(_ name: String) -> String {
            let path = folder + "/" + name
            return FileManager.default.fileExists(atPath: path) ? read(path) : ""
        }
        var inputs = PackBuilder.Inputs(
            wordFrequencies: read(folder + "/wordfreq.tsv"), corpus: read(folder + "/corpus.txt"))
        inputs.surfaceForms = optional("case.tsv")
        inputs.bigrams = optional("bigrams.tsv")
        inputs.spellings = optional("hunspell.txt")
        inputs.neuralSections = NeuralSectionsOption.read(arguments)
        var parameters = PackBuilder.Parameters()
        if let value = arguments.options["--language"] {
            // The code names the pack's file once installed: the one shared check.
            if let problem = LanguageCode.problem(value) { fail(problem, status: 2) }
            parameters.language = value
        }
        if let value = arguments.options["--name"] { parameters.displayName = value }
        if let value = arguments.options["--pack-version"] { parameters.version = value }
        if let value = arguments.int("--vocabulary") { parameters.vocabularySize = value }
        if let value = arguments.int("--char-table-bytes") { parameters.characterTableBytes = value }
        if let value = arguments.int("--char-order") { parameters.characterOrder = value }
        if let value = arguments.int("--bigram-successors") { parameters.bigramSuccessors = value }
        if let value = arguments.int("--trigram-successors") { parameters.trigramSuccessors = value }
        if let value = arguments.int("--hold-out-every") { parameters.holdOutEvery = value }
        if let value = arguments.double("--discount") { parameters.discount = value }
        if let value = arguments.int("--trigram-context-min") { parameters.trigramContextMinimumCount = value }
        if let value = arguments.double("--trigram-successor-min") { parameters.trigramMinimumSuccessorCount = value }
        if let value = arguments.double("--min-successor-count") { parameters.minimumSuccessorCount = value }
        if let value = arguments.double("--external-bigram-weight") { parameters.externalBigramWeight = value }
        var builder = PackBuilder(inputs: inputs, parameters: parameters)
        builder.progress = { warn("pack build: " + $0) }
        let bytes = builder.build()
        do {
            try Data(bytes).write(to: URL(filePath: output), options: .atomic)
            if let heldOut = arguments.options["--held-out"] {
                let text = builder.heldOutDocuments().joined(separator: "\n") + "\n"
                try Data(text.utf8).write(to: URL(filePath: heldOut), options: .atomic)
            }
        } catch {
            fail(tr("cannot write {path}: {problem}", ["path": output, "problem": FileProblem.reason(error)]))
        }
        warn("pack build: wrote \(output) (\(bytes.count) bytes)")
    }

    static func info(_ arguments: Arguments) {
        guard arguments.positional.count >= 2 else { arguments.usageError("pack info needs a FILE") }
        let pack = openPack(path: arguments.positional[1])
        print("file: \(pack.path) (\(pack.file.size) bytes)")
        for (key, value) in pack.metadata.sorted(by: { $0.key < $1.key }) { print("\(key): \(value)") }
        print("vocabulary: \(pack.wordCount) words")
        // Which words the spelling dictionary vouches for, and how many are shown capitalised.
        var spelled = 0
        var spelledInLowercase = 0
        var capitalized = 0
        for id in 0..<pack.wordCount {
            let flags = pack.wordFlags(id)
            if flags.contains(.spelled) { spelled += 1 }
            if flags.contains(.spelledInLowercase) { spelledInLowercase += 1 }
            if flags.contains(.capitalized) { capitalized += 1 }
        }
        let share = { (count: Int) in CheckCommand.format1(100 * Double(count) / Double(max(1, pack.wordCount))) }
        print(
            "spelled: \(spelled) words (\(share(spelled)) %), \(spelledInLowercase) in lower case (\(share(spelledInLowercase)) %); shown capitalised: \(capitalized)"
        )
        // The neural re-ranker's parts (issue 17), when the pack has them.
        if let model = pack.wordLanguageModel {
            print("word model: GRU, \(model.vocabularySize) words, \(model.dimension) dimensions")
        }
        if let network = pack.rerankerNetwork {
            let shape = ([network.inputCount] + network.layers.map(\.rows)).map(String.init).joined(separator: "→")
            let used =
                NeuralContextReranker(pack: pack) != nil ? "re-ranks the window" : "not used: the word model is missing"
            print("reranker network: \(shape) (\(used))")
        }
    }
}
