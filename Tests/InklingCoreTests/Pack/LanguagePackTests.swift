import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

/// The vocabulary and n-gram reader, on the hand-written English fixture.
@Suite("LanguagePack")
struct LanguagePackTests {
    let pack = FixturePacks.english

    func id(_ key: String) throws -> Int {
        try #require(pack.id(ofKey: key), "\(key) is not in the fixture vocabulary")
    }

    @Test func metadata() {
        #expect(pack.language == "en")
        #expect(pack.metadata["name"] == "English (test fixture)")
        #expect(pack.metadata["version"] == "fixture-1")
        #expect(pack.metadata["words"] == String(pack.wordCount))
        #expect(pack.metadata["characterOrder"] == "6")
        #expect(pack.characterModel.order == 6)
        #expect(pack.path == "")
    }

    @Test("id(ofKey:) finds every key and only keys")
    func idOfKey() throws {
        #expect(pack.wordCount > 150)
        for id in 0..<pack.wordCount {
            #expect(pack.id(ofKey: pack.key(id)) == id, "\(pack.key(id))")
        }
        for key in [
            "the", "i", "i'm", "don't", "well-known", "obama", "привет", "caf\u{E9}", "na\u{EF}ve", "rock'n'roll",
            "o'clock", "e-mail",
        ] {
            #expect(pack.id(ofKey: key) != nil, "\(key)")
        }
        // Keys are lower case with a straight apostrophe; numbers never enter the vocabulary.
        for key in [
            "", "The", "Obama", "don\u{2019}t", "th", "thez", "zzzz", "2020", "mp3", "\u{10FFFF}", "cafe\u{301}",
        ] {
            #expect(pack.id(ofKey: key) == nil, "\(key.debugDescription)")
        }
    }

    @Test("keys are strictly sorted by UTF-8 bytes")
    func keysSorted() {
        for id in 1..<pack.wordCount {
            #expect(Array(pack.key(id - 1).utf8).lexicographicallyPrecedes(Array(pack.key(id).utf8)))
        }
    }

    /// The prefix range must equal a brute-force scan over the vocabulary.
    func checkRange(_ prefix: String) {
        let range = pack.range(ofPrefix: prefix)
        let expected = (0..<pack.wordCount).filter { pack.key($0).utf8.starts(with: prefix.utf8) }
        #expect(Array(range) == expected, "prefix \(prefix.debugDescription)")
    }

    @Test("range(ofPrefix:) equals a brute-force scan")
    func prefixRanges() {
        #expect(pack.range(ofPrefix: "") == 0..<pack.wordCount)
        #expect(pack.range(ofPrefix: "zzz").isEmpty)
        #expect(pack.range(ofPrefix: "\u{10FFFF}").isEmpty)
        #expect(pack.range(ofPrefix: "\0").isEmpty)
        #expect(pack.range(ofPrefix: "the").map(pack.key).contains("the"))
        #expect(Set(pack.range(ofPrefix: "при").map(pack.key)) == ["при", "привет", "пример"])
        #expect(Set(pack.range(ofPrefix: "пр").map(pack.key)) == ["при", "привет", "пример", "правда", "право", "про"])
        #expect(Set(pack.range(ofPrefix: "caf").map(pack.key)) == ["caf\u{E9}", "caf\u{E9}s"])
        #expect(Set(pack.range(ofPrefix: "don'").map(pack.key)) == ["don't"])
        #expect(Set(pack.range(ofPrefix: "well-").map(pack.key)) == ["well-known"])
        // Every prefix of every key, plus near misses around each one.
        for id in 0..<pack.wordCount {
            let scalars = Array(pack.key(id).unicodeScalars)
            for length in 1...scalars.count {
                let prefix = String(String.UnicodeScalarView(scalars.prefix(length)))
                checkRange(prefix)
                checkRange(prefix + "z")
                checkRange(prefix + "\u{0}")
            }
        }
        var rng = SplitMix64(seed: 5)
        let alphabet: [Unicode.Scalar] = ["a", "c", "e", "h", "t", "'", "-", "п", "р", "и", "\u{E9}", "~"]
        for _ in 0..<500 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...4, using: &rng) { scalars.append(alphabet.randomElement(using: &rng)!) }
            checkRange(String(scalars))
        }
    }

    @Test("endOfRange(sharingPrefixOf:length:) ends the range a brute-force scan finds")
    func endOfRangeFromAWord() {
        for id in 0..<pack.wordCount {
            let bytes = Array(pack.key(id).utf8)
            // Every byte length, inside a scalar too, and lengths past the key's end (the whole key).
            for length in 0...(bytes.count + 2) {
                let prefix = bytes.prefix(length)
                // The first id after `id` whose key does not start with those bytes (sorted keys).
                let expected =
                    ((id + 1)..<pack.wordCount).first { !pack.key($0).utf8.starts(with: prefix) } ?? pack.wordCount
                #expect(
                    pack.endOfRange(sharingPrefixOf: id, length: length) == expected,
                    "\(pack.key(id).debugDescription), \(length) bytes")
            }
        }
        // The same as `range(ofPrefix:)` where the prefix is whole scalars.
        for id in 0..<pack.wordCount {
            let scalars = Array(pack.key(id).unicodeScalars)
            for length in 1...scalars.count {
                let prefix = String(String.UnicodeScalarView(scalars.prefix(length)))
                #expect(
                    pack.endOfRange(sharingPrefixOf: id, length: prefix.utf8.count)
                        == pack.range(ofPrefix: prefix).upperBound)
            }
        }
    }

    @Test(
        "display forms: names and I keep their capitals, common words stay lower case",
        arguments: [
            ("obama", "Obama"), ("clinton", "Clinton"), ("hillary", "Hillary"), ("barack", "Barack"),
            ("donald", "Donald"), ("trump", "Trump"), ("i", "I"), ("i'm", "I'm"),
            ("the", "the"), ("white", "white"), ("house", "house"), ("states", "states"), ("united", "united"),
            ("president", "president"), ("don't", "don't"), ("привет", "привет"), ("caf\u{E9}", "caf\u{E9}"),
        ])
    func displayForms(key: String, display: String) throws {
        #expect(pack.display(try id(key)) == display)
    }

    @Test func wordFlags() throws {
        #expect(pack.wordFlags(try id("obama")).contains(.capitalized))
        #expect(pack.wordFlags(try id("i")).contains(.capitalized))
        #expect(!pack.wordFlags(try id("the")).contains(.capitalized))
        for key in ["white", "house", "states", "united", "president"] {
            #expect(pack.wordFlags(try id(key)).contains(.sometimesCapitalized), "\(key)")
            #expect(!pack.wordFlags(try id(key)).contains(.capitalized), "\(key)")
        }
        #expect(!pack.wordFlags(try id("of")).contains(.sometimesCapitalized))
        for key in ["the", "cat", "car", "obama", "clinton"] {
            #expect(pack.wordFlags(try id(key)).contains(.spelled), "\(key)")
        }
        #expect(!pack.wordFlags(try id("of")).contains(.spelled))
    }

    @Test("priors follow the frequency list and form a distribution")
    func priors() throws {
        let ordered = [
            "the", "of", "and", "to", "a", "in", "is", "that", "for", "you", "was", "with", "this",
            "people", "money", "cat", "cents", "thesis", "thermal", "naïve", "rock'n'roll",
        ]
        for (higher, lower) in zip(ordered, ordered.dropFirst()) {
            #expect(pack.logPrior(try id(higher)) > pack.logPrior(try id(lower)), "\(higher) > \(lower)")
        }
        // Ratios survive quantisation (1/100 nat).
        let ratio = Math.exp(pack.logPrior(try id("the")) - pack.logPrior(try id("of")))
        #expect(abs(ratio - 0.05 / 0.028) < 0.03)
        var total: Float = 0
        for id in 0..<pack.wordCount {
            #expect(pack.logPrior(id) < 0)
            total += Math.exp(pack.logPrior(id))
        }
        #expect(abs(total - 1) < 0.01)
        // The most frequent words, best first.
        let top = Array(pack.topWords)
        #expect(pack.key(Int(top[0])) == "the")
        #expect(top.count == min(256, pack.wordCount))
        for (a, b) in zip(top, top.dropFirst()) { #expect(pack.logPrior(Int(a)) >= pack.logPrior(Int(b))) }
    }

    @Test("bigram successors: best first, real continuations, probabilities sum to one with the back-off")
    func bigrams() throws {
        func successors(_ key: String) throws -> [String] {
            pack.bigramSuccessors(of: try id(key)).entries.map { pack.key(LanguagePack.decodeSuccessor($0).id) }
        }
        #expect(try successors("united").first == "states")
        #expect(try successors("thank").first == "you")
        #expect(try successors("hillary").first == "clinton")
        #expect(try successors("don't").first == "know")
        // A number breaks the chain: "paid 12 cents" is not a bigram "paid cents".
        #expect(try !successors("paid").contains("cents"))
        #expect(try !successors("paid").contains("dollars"))
        // Sentence starts.
        let starts = pack.bigramSuccessors(of: pack.sentenceStartID).entries.map {
            pack.key(LanguagePack.decodeSuccessor($0).id)
        }
        #expect(starts.contains("the") && starts.contains("i") && starts.contains("привет"))
        #expect(!starts.contains("states"))
        #expect(pack.sentenceStartID == pack.wordCount)

        for context in 0...pack.wordCount {
            let (entries, weight) = pack.bigramSuccessors(of: context)
            let probabilities = entries.map { Math.exp(LanguagePack.decodeSuccessor($0).logProb) }
            for (a, b) in zip(probabilities, probabilities.dropFirst()) { #expect(a >= b) }
            let total = probabilities.reduce(0, +) + weight
            #expect(abs(total - 1) < 0.05, "context \(context): \(total)")
        }
    }

    @Test func trigrams() throws {
        let the = try id("the")
        let united = try id("united")
        let states = try id("states")
        let successors = try #require(pack.trigramSuccessors(of: the, united))
        #expect(successors.entries.map { LanguagePack.decodeSuccessor($0).id }.first == states)
        #expect(successors.weight > 0 && successors.weight < 1)
        #expect(pack.trigramSuccessors(of: united, the) == nil)
        #expect(pack.trigramSuccessors(of: pack.sentenceStartID, pack.sentenceStartID) == nil)
        // Every stored context is found again by its key.
        for key in pack.trigramKeys {
            #expect(pack.trigramSuccessors(of: Int(key >> 32), Int(key & 0xFFFF_FFFF)) != nil)
        }
        #expect(pack.trigramKeys.count >= 2)
    }

    @Test func quantisation() {
        for id: UInt32 in [0, 1, 12345, 0xFFFFF] {
            for cost in [0.0, 0.5, 3.25, 20.0] {
                let decoded = LanguagePack.decodeSuccessor(Quantize.successor(id: id, cost: cost))
                #expect(decoded.id == Int(id))
                #expect(abs(decoded.logProb + Float(cost)) <= 1.0 / 256 + 1e-6)
            }
        }
        #expect(Quantize.successorCost(-1) == 0)
        #expect(Quantize.successorCost(1000) == 4095)
        #expect(Quantize.unigramCost(1e9) == .max)
        #expect(Quantize.unigramCost(-3) == 0)
        #expect(Quantize.backoffMass(1) == 0)
        #expect(Quantize.backoffMass(0) == 255)
        #expect(abs(Quantize.backoffMassValue(Quantize.backoffMass(0.25)) - 0.25) < 0.01)
    }

    @Test func opensFromAFile() throws {
        let path = try FixturePacks.writeTemporaryFile(FixturePacks.englishBytes)
        defer { FixturePacks.removeTemporaryFile(path) }
        let fromFile = try LanguagePack(path: path)
        #expect(fromFile.path == path)
        #expect(fromFile.wordCount == pack.wordCount)
        #expect(
            (0..<pack.wordCount).allSatisfy {
                fromFile.key($0) == pack.key($0) && fromFile.display($0) == pack.display($0)
            })
    }

    @Test(
        "the committed English pack opens and is large",
        .enabled(if: FixturePacks.committedEnglishPackPath(from: #filePath) != nil, "data/packs/en.inkpack is absent"))
    func committedEnglishPack() throws {
        let path = try #require(FixturePacks.committedEnglishPackPath(from: #filePath))
        let pack = try LanguagePack(path: path)
        #expect(pack.language == "en")
        #expect(pack.wordCount > 50_000)
        let the = try #require(pack.id(ofKey: "the"))
        #expect(pack.key(Int(pack.topWords[0])) == "the" || pack.logPrior(the) > -4)
        #expect(pack.display(try #require(pack.id(ofKey: "i"))) == "I")
        #expect(pack.range(ofPrefix: "th").count > 100)
        let suggestions = Predictor(pack: pack).suggest(before: "I don", count: 5)
        #expect(suggestions.contains("don't"))
    }

    @Test(
        "the committed English pack vouches for words hunspell makes with affix rules, and shows names' possessives capitalised",
        .enabled(if: FixturePacks.committedEnglishPackPath(from: #filePath) != nil, "data/packs/en.inkpack is absent"))
    func committedEnglishPackSpellings() throws {
        let path = try #require(FixturePacks.committedEnglishPackPath(from: #filePath))
        let pack = try LanguagePack(path: path)
        // Stems with affix rules in en_US.dic (`connect/AEDVGS`, `solution's/AE`): the stems alone
        // left these unvouched for, so every one went through the checker's near-word search.
        for word in ["solution", "disconnect", "disclosure", "distrust", "discredited"] {
            let id = try #require(pack.id(ofKey: word), "\(word) is not in the pack")
            #expect(pack.wordFlags(id).contains(.spelledInLowercase), "\(word) is not vouched for")
        }
        for (key, display) in [("mexico's", "Mexico's"), ("robert's", "Robert's"), ("july's", "July's")] {
            #expect(pack.display(try #require(pack.id(ofKey: key))) == display)
        }
        #expect(pack.display(try #require(pack.id(ofKey: "transformers"))) == "transformers")
    }
}
