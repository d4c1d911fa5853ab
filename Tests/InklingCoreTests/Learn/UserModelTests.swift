import InklingCore
import Testing

@Suite("User model and learning policy")
struct UserModelTests {
    @Test func recordsWordsAndContexts() {
        var model = UserModel()
        model.record(word: "Zorblax", after: ["we", "met"], now: 5)
        #expect(model.knows("zorblax"))
        #expect(model.word("zorblax")?.display == "Zorblax")
        #expect(model.successors(of: "met")["zorblax"]?.count == 1)
        #expect(model.successors(of: "we met")["zorblax"]?.count == 1)
        #expect(model.total(of: "") == 1)
    }

    @Test func loadingAnEntryTwiceDoesNotDoubleItsTotal() {
        var model = UserModel()
        let entry = LearnedEntry(context: "", key: "zorblax", display: "Zorblax", count: 3, lastUsed: 0)
        model.load([entry])
        model.load([entry])
        #expect(model.total(of: "") == 3)
    }

    @Test func forgetRemovesTheWordAsWordSuccessorAndContext() {
        var model = UserModel()
        model.record(word: "zorblax", after: ["we"], now: 0)
        model.record(word: "rocks", after: ["we", "zorblax"], now: 0)
        model.forget("Zorblax")
        #expect(!model.knows("zorblax"))
        #expect(model.successors(of: "we")["zorblax"] == nil)
        #expect(model.successors(of: "zorblax").isEmpty && model.successors(of: "we zorblax").isEmpty)
        #expect(model.knows("rocks"))
    }

    @Test func capsKeepTheMostUsedEntries() {
        var model = UserModel()
        model.capacity = 50
        for index in 0..<1000 {
            model.record(word: "w" + String(repeating: "a", count: index % 80 + 1), after: [], now: 0)
        }
        #expect(model.entryCount <= 50)
    }

    @Test(arguments: [
        "john@example.com", "https://example.org/x", "www.example.org", "Xk9fQ2mZ7pL4", "sk-ABCdef123456ghi",
    ])
    func addressesAndSecretsAreRefusedAsChunks(chunk: String) {
        #expect(!LearningPolicy.mayLearnChunk(chunk))
    }

    @Test(arguments: ["Clinton-Kaine", "Clinton-Kaine's,", "internationalization", "well-known", "don't"])
    func ordinaryWordsAreLearnable(chunk: String) {
        #expect(LearningPolicy.mayLearnChunk(chunk))
    }

    @Test func aRefusedChunkBreaksTheContext() {
        let predictor = Predictor(pack: RealPack.pack)
        predictor.learn(word: "then", before: "mail bob@example.com ", now: 0)
        predictor.learn(word: "later", before: "use Xk9fQ2mZ7pL4 ", now: 0)
        let contexts = predictor.userModel.allEntries.map(\.context)
        #expect(!contexts.contains { $0.contains("com") || $0.contains("example") || $0.contains("xk9") })
        #expect(predictor.userModel.knows("then") && predictor.userModel.knows("later"))
    }
}
