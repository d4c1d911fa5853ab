import InklingTestSupport
import Testing

@testable import InklingCore

/// Narrowing the last key's candidates must answer exactly what a search from the dictionary
/// answers, for every prefix of every word: same words, same order, same scores.
@Suite("Incremental prediction")
struct IncrementalPredictionTests {
    /// Typing a text one scalar at a time, with typos, backspaces and learning: every
    /// request goes to a predictor that narrows and to one that always searches afresh.
    struct Typist {
        let narrowing: Predictor
        let fresh: Predictor
        let learns: Bool
        var requests = 0
        var mismatches: [String] = []

        init(pack: LanguagePack, options: PredictorOptions, learns: Bool) {
            narrowing = Predictor(pack: pack, options: options)
            fresh = Predictor(pack: pack, options: options)
            fresh.reusesCandidates = false
            self.learns = learns
        }

        mutating func ask(_ before: String, count: Int = 3) {
            requests += 1
            let expected = fresh.suggestions(before: before, count: count)
            let got = narrowing.suggestions(before: before, count: count)
            // Equal texts, scores to the bit, correction flags.
            if got != expected || zip(got, expected).contains(where: { $0.score.bitPattern != $1.score.bitPattern }) {
                if mismatches.count < 5 {
                    mismatches.append("\(before.suffix(40).debugDescription): \(got) vs \(expected)")
                }
            }
        }

        /// Types one document (a line) scalar by scalar; `typos` makes some words start wrong,
        /// then erases back and retypes them, like a user would.
        mutating func type(_ document: String, random: inout SplitMix64, typos: Bool) {
            narrowing.reset()
            fresh.reset()
            var typed = ""
            var word = ""
            for scalar in document.unicodeScalars {
                let isLetter = scalar.properties.isAlphabetic || scalar == "'"
                if typos, isLetter, word.unicodeScalars.count == 2, random.next() % 4 == 0 {
                    // A neighbouring wrong letter or two, asked for, then erased again.
                    let wrong: [Unicode.Scalar] = ["q", "x", "z", "j"]
                    var detour = typed
                    for _ in 0..<(1 + Int(random.next() % 3)) {
                        detour.unicodeScalars.append(wrong[Int(random.next() % UInt64(wrong.count))])
                        ask(detour)
                    }
                    ask(typed)
                }
                typed.unicodeScalars.append(scalar)
                if isLetter {
                    word.unicodeScalars.append(scalar)
                } else if !word.isEmpty {
                    if learns {
                        let before = String(typed.unicodeScalars.dropLast(word.unicodeScalars.count + 1))
                        narrowing.learn(word: word, before: before, now: 0)
                        fresh.learn(word: word, before: before, now: 0)
                    }
                    word = ""
                }
                ask(typed)
                // Sometimes a different count for the same text (the engine asks for a page), or
                // the whole window (a wrong candidate at its bottom seldom shows in the first few).
                switch random.next() % 8 {
                case 0: ask(typed, count: 8)
                case 1: ask(typed, count: 40)
                default: break
                }
            }
        }
    }

    static let texts: [String] =
        EnglishFixture.corpus.split(separator: "\n").map(String.init) + [
            "THE PRESIDENT spoke. the president SPOKE at the White House and then the president left",
            "Zorblax met Zorblax at the house; zorb zorbl zorbla ZORBLAX again and again.",
            "I don't know what they're saying about the café and the cafe\u{301} today",
            "tge presidnet of teh united staets spoek at the whtie housr",
        ]

    @Test(
        "narrowing answers exactly as a fresh search, every prefix (fixture pack)",
        arguments: [(true, false, false), (true, true, true), (false, false, true)])
    func fixturePack(characterModel: Bool, typos: Bool, learns: Bool) {
        var options = PredictorOptions()
        options.useCharacterModel = characterModel
        var typist = Typist(pack: FixturePacks.english, options: options, learns: learns)
        var random = SplitMix64(seed: 18)
        for text in Self.texts { typist.type(text, random: &random, typos: typos) }
        #expect(typist.mismatches.isEmpty, "\(typist.mismatches)")
        #expect(typist.requests > 2000)
        // Most keys of a word narrow the last key's candidates (else nothing was tested).
        #expect(typist.narrowing.narrowedKeys > typist.requests / 4, "\(typist.narrowing.narrowedKeys)")
        #expect(typist.fresh.narrowedKeys == 0)
    }

    @Test(
        "narrowing answers exactly as a fresh search, every prefix (committed English pack)",
        .enabled(if: FixturePacks.committedEnglishPackPath(from: #filePath) != nil, "data/packs/en.inkpack is absent"),
        arguments: [false, true])
    func committedPack(learns: Bool) throws {
        let pack = try LanguagePack(path: try #require(FixturePacks.committedEnglishPackPath(from: #filePath)))
        var typist = Typist(pack: pack, options: PredictorOptions(), learns: learns)
        var random = SplitMix64(seed: learns ? 7 : 5)
        // The real pack's ranges are large: the best-by-prior list is cut at 40 for most prefixes.
        for text in Self.texts.prefix(learns ? 12 : 24) + Self.texts.suffix(4) {
            typist.type(text, random: &random, typos: true)
        }
        #expect(typist.mismatches.isEmpty, "\(typist.mismatches)")
        #expect(typist.narrowing.narrowedKeys > typist.requests / 4, "\(typist.narrowing.narrowedKeys)")
    }

    /// The engine keeps up to 2,000 scalars before the cursor: every key of a word must still
    /// see the same context (its last 1,000 scalars), so the word's keys narrow, and the answer
    /// is the one a fresh predictor gives for that context and the word.
    @Test("a word typed after more than 1000 characters narrows and answers for the cut context")
    func longDocument() {
        var document = ""
        while document.unicodeScalars.count < 2600 {
            for line in EnglishFixture.corpus.split(separator: "\n") { document += line + " " }
        }
        let narrowing = Predictor(pack: FixturePacks.english)
        let fresh = Predictor(pack: FixturePacks.english)
        fresh.reusesCandidates = false
        var typed = ""
        var longRequests = 0
        var longNarrowed = 0
        var mismatches: [String] = []
        for (index, scalar) in document.unicodeScalars.enumerated() {
            typed.unicodeScalars.append(scalar)
            if typed.unicodeScalars.count > 2000 {
                typed = String(typed.unicodeScalars.suffix(1000))  // as the engine trims
            }
            let narrowedBefore = narrowing.narrowedKeys
            let count = index % 3 == 0 ? 40 : 5  // sometimes the whole window
            let got = narrowing.suggestions(before: typed, count: count)
            let expected = fresh.suggestions(before: typed, count: count)
            if got != expected || zip(got, expected).contains(where: { $0.score.bitPattern != $1.score.bitPattern }) {
                mismatches.append("\(index): \(got) vs \(expected)")
            }
            guard typed.unicodeScalars.count > 1100 else { continue }
            longRequests += 1
            if narrowing.narrowedKeys > narrowedBefore { longNarrowed += 1 }
            if index % 7 == 0 {
                // A new predictor asked for the last 1,000 scalars of the context and the word.
                let (context, partial) = WordText.splitPartialWord(typed)
                let cut = String(context.unicodeScalars.suffix(1000)) + partial
                let alone = Predictor(pack: FixturePacks.english).suggestions(before: cut, count: count)
                if got != alone || zip(got, alone).contains(where: { $0.score.bitPattern != $1.score.bitPattern }) {
                    mismatches.append("\(index) cut: \(got) vs \(alone)")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        #expect(longRequests > 1000)
        #expect(longNarrowed > longRequests / 4, "\(longNarrowed) of \(longRequests)")
    }

    @Test("a longer word after a change of options, reranker or learned words is searched afresh")
    func invalidation() {
        let predictor = Predictor(pack: FixturePacks.english)
        _ = predictor.suggestions(before: "the pr", count: 3)
        let narrowedBefore = predictor.narrowedKeys
        predictor.updateUserModel { $0.record(word: "prism", after: ["the"], now: 0) }
        let afterLearning = predictor.suggestions(before: "the pri", count: 3)
        #expect(predictor.narrowedKeys == narrowedBefore)
        let fresh = Predictor(pack: FixturePacks.english)
        fresh.reusesCandidates = false
        fresh.updateUserModel { $0.record(word: "prism", after: ["the"], now: 0) }
        #expect(afterLearning == fresh.suggestions(before: "the pri", count: 3))
        #expect(afterLearning.map(\.text).contains("prism"))
    }
}
