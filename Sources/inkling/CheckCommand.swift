import FoundationEssentials
import InklingCore

/// `inkling check TEXT` and `inkling check-bench --text FILE`: the local checker from the terminal.
enum CheckCommand {
    static func checker(_ arguments: Arguments, pack: LanguagePack) -> SpellChecker {
        var checker = SpellChecker(pack: pack, layout: .named(arguments.options["--layout"] ?? "qwerty"))
        if let value = arguments.double("--margin") { checker.margin = Float(value) }
        if let value = arguments.double("--edit-cost") { checker.costPerEdit = Float(value) }
        if let value = arguments.double("--name-margin") { checker.nameMargin = Float(value) }
        if let value = arguments.double("--unknown") { checker.unknownWordLogProb = Float(value) }
        if let value = arguments.double("--frequent-prior") { checker.frequentWordLogPrior = Float(value) }
        if let value = arguments.double("--frequent-bonus") { checker.frequentWordBonus = Float(value) }
        return checker
    }

    /// Checks every word of a document the way the session does when each word is finished.
    /// Each flag comes with the UTF-8 offset where its word starts (word indices would shift when a
    /// typo changes how the text splits into words, e.g. `don''t`).
    static func flags(
        in document: String, checker: SpellChecker, timed: ((Substring, Duration, Duration) -> Void)? = nil
    ) -> [(offset: Int, flag: TypoFlag)] {
        var result: [(Int, TypoFlag)] = []
        var seen: Set<String> = []
        let clock = ContinuousClock()
        for word in WordText.words(in: document) {
            let before = document[..<word.startIndex]
            let after = document[word.endIndex...]
            // Earlier words are exempt unless they were flagged themselves, as in the session.
            // In slices, as the engine runs it: the longest slice is what a key may wait for.
            var start = clock.now
            let first = start
            var found: TypoFlag?
            var longest = Duration.zero
            switch checker.startCheck(word: word, before: before, after: after, exempt: seen) {
            case .finished(let flag): found = flag
            case .searching(var search):
                while !search.isFinished {
                    _ = search.advance(work: SpellChecker.searchSliceWork)
                    let now = clock.now
                    longest = max(longest, now - start)
                    start = now
                }
                found = search.flag
            }
            let end = clock.now
            longest = max(longest, end - start)
            timed?(word, end - first, longest)
            if let flag = found {
                result.append((document.utf8.distance(from: document.startIndex, to: word.startIndex), flag))
            } else {
                seen.insert(WordText.key(word))
            }
        }
        return result
    }

    static func check(_ arguments: Arguments) {
        let pack = openPack(arguments)
        let checker = checker(arguments, pack: pack)
        let text = arguments.positional.joined(separator: " ")
        let found = flags(in: text, checker: checker)
        if found.isEmpty { print(tr("no likely typos")) }
        for (_, flag) in found {
            print("\(flag.word) → \(flag.replacements.joined(separator: ", "))  (\(flag.explanation))")
        }
    }

    static func bench(_ arguments: Arguments) {
        guard let path = arguments.options["--text"] else { arguments.usageError(tr("check-bench needs --text FILE")) }
        let pack = openPack(arguments)
        let checker = checker(arguments, pack: pack)
        let documents = PackCommand.read(path).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        let seed = UInt64(arguments.int("--seed") ?? 1)
        let rate = arguments.double("--rate") ?? 0.1
        var injector = TypoInjector(seed: seed, layout: checker.layout)
        let clock = ContinuousClock()
        var checkTime = Duration.zero
        var checks = 0
        // Clean text: every flag is a false flag.
        var words = 0
        var falseFlags = 0
        // Each word's check on the clean text (the session runs one after every finished word, on
        // the main loop: a long one delays the next key).
        var wordTimes: [(word: Substring, time: Duration)] = []
        // The longest slice of each word's check (the engine runs a long search in slices).
        var sliceTimes: [Double] = []
        for document in documents {
            words += WordText.words(in: document).count
            let start = clock.now
            let found = flags(in: document, checker: checker) {
                wordTimes.append(($0, $1))
                sliceTimes.append(Self.microseconds($2))
            }
            falseFlags += found.count
            if arguments.options["--show"] == "false" {
                for (offset, flag) in found {
                    let context = document.utf8.prefix(offset).suffix(30)
                    warn(
                        "flag on clean text: …\(String(decoding: context, as: UTF8.self))[\(flag.word) → \(flag.replacements.joined(separator: ", "))]"
                    )
                }
            }
            checkTime += clock.now - start
            checks += WordText.words(in: document).count
        }
        // Injected typos.
        var injected = 0
        var nonWordInjected = 0
        var caught = 0
        var caughtNonWord = 0
        var correct = 0
        var falseOnInjectedText = 0
        var byKind: [String: (Int, Int)] = [:]
        for document in documents {
            var text = ""
            var cursor = document.startIndex
            // Keyed by the UTF-8 offset of the typo in the injected text.
            var typos: [Int: (original: String, typo: String, kind: TypoInjector.Kind, isWord: Bool)] = [:]
            for word in WordText.words(in: document) {
                text += document[cursor..<word.startIndex]
                cursor = word.endIndex
                let original = String(word)
                let eligible =
                    original.unicodeScalars.count >= 3 && !WordText.containsDigit(original)
                    && !WordText.isAllCaps(original)
                if eligible, Double(injector.below(1_000_000)) / 1_000_000 < rate,
                    let (typo, kind) = injector.corrupt(original)
                {
                    typos[text.utf8.count] = (original, typo, kind, pack.id(ofKey: WordText.key(typo)) != nil)
                    text += typo
                } else {
                    text += original
                }
            }
            text += document[cursor...]
            if arguments.options["--show"] == "text" { print(text) }
            let found = Dictionary(
                flags(in: text, checker: checker).map { ($0.offset, $0.flag) }, uniquingKeysWith: { a, _ in a })
            for (offset, typo) in typos {
                injected += 1
                if !typo.isWord { nonWordInjected += 1 }
                var entry = byKind[typo.kind.rawValue] ?? (0, 0)
                entry.0 += 1
                if let flag = found[offset] {
                    caught += 1
                    entry.1 += 1
                    if !typo.isWord { caughtNonWord += 1 }
                    if flag.replacements.first == typo.original {
                        correct += 1
                    } else if arguments.options["--show"] == "wrong" {
                        warn(
                            "wrong: \(typo.original) typed as \(typo.typo) (\(typo.kind.rawValue)) → \(flag.replacements)"
                        )
                    }
                } else if arguments.options["--show"] == "misses" {
                    warn(
                        "missed: …\(String(decoding: text.utf8.prefix(offset).suffix(30), as: UTF8.self))[\(typo.original) typed as \(typo.typo) (\(typo.kind.rawValue)\(typo.isWord ? ", a word" : ""))"
                    )
                }
                byKind[typo.kind.rawValue] = entry
            }
            falseOnInjectedText += found.keys.filter { typos[$0] == nil }.count
        }
        func pct(_ a: Int, _ b: Int) -> String { b == 0 ? "-" : String(format1(100 * Double(a) / Double(b))) + " %" }
        print(
            "clean text: \(words) words, \(falseFlags) false flags = \(format1(1000 * Double(falseFlags) / Double(max(1, words)))) per 1,000 words"
        )
        print("injected typos: \(injected) (seed \(seed), rate \(rate)); \(nonWordInjected) are not words of the pack")
        print(
            "recall (all typos): \(pct(caught, injected)); recall (non-word typos): \(pct(caughtNonWord, nonWordInjected))"
        )
        print(
            "top-1 correction accuracy: \(pct(correct, injected)) of all typos, \(pct(correct, caught)) of flagged ones"
        )
        print("false flags on other words of the injected text: \(falseOnInjectedText)")
        for (kind, entry) in byKind.sorted(by: { $0.key < $1.key }) {
            print("  \(kind): \(pct(entry.1, entry.0)) caught of \(entry.0)")
        }
        let microseconds = Self.microseconds(checkTime)
        print("mean check time per word: \(format1(microseconds / Double(max(1, checks)))) µs")
        let sorted = wordTimes.map { Self.microseconds($0.time) }.sorted()
        if let slowest = sorted.last {
            let p50 = sorted[(sorted.count - 1) / 2]
            let p99 = sorted[(sorted.count - 1) * 99 / 100]
            print(
                "check time per word on the clean text: p50 \(format1(p50)) µs, p99 \(format1(p99)) µs, max \(format1(slowest)) µs"
            )
            let slices = sliceTimes.sorted()
            print(
                "longest slice of a check (\(SpellChecker.searchSliceWork) units of work; what a key may wait for): p99 \(format1(slices[(slices.count - 1) * 99 / 100])) µs, max \(format1(slices.last ?? 0)) µs"
            )
        }
        if arguments.options["--show"] == "slow" {
            for entry in wordTimes.sorted(by: { $0.time > $1.time }).prefix(20) {
                warn("slow: \(entry.word) \(format1(Self.microseconds(entry.time))) µs")
            }
        }
    }

    static func microseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1_000_000 + Double(duration.components.attoseconds) / 1e12
    }

    static func format1(_ value: Double) -> String {
        let scaled = (value * 10).rounded() / 10
        return scaled == scaled.rounded() ? "\(Int(scaled)).0" : "\(scaled)"
    }
}
