import Testing

@testable import InklingCore

@Suite struct RemovalLogTests {
    @Test func aWipeRefusesEveryChangeMadeBeforeIt() {
        let log = RemovalLog(wipedAt: 5)
        #expect(!log.allows(context: "", key: "word", base: 4))
        #expect(log.allows(context: "", key: "word", base: 5))
        #expect(log.allows(context: "the", key: "word", base: 9))
    }

    @Test func aForgetRefusesOlderChangesToItsWordAsWordOrContext() {
        let log = RemovalLog(forgotten: [RemovalLog.tag("secret"): 7])
        #expect(!log.allows(context: "", key: "secret", base: 6))
        #expect(!log.allows(context: "secret", key: "plan", base: 6))
        #expect(!log.allows(context: "my secret", key: "plan", base: 6))
        #expect(log.allows(context: "", key: "secret", base: 7))  // typed on a model that knew of the forget
        #expect(log.allows(context: "", key: "other", base: 6) || RemovalLog.tag("other") == RemovalLog.tag("secret"))
    }

    @Test func changesOlderThanTheLogsHorizonAreRefused() {
        let log = RemovalLog(completeSince: 10)
        #expect(!log.allows(context: "", key: "word", base: 9))
        #expect(log.allows(context: "", key: "word", base: 10))
    }

    @Test func tagsAreStableAndSpread() {
        #expect(RemovalLog.tag("secret") == RemovalLog.tag("secret"))
        let tags = Set((0..<1000).map { RemovalLog.tag("w\($0)") })
        #expect(tags.count > 980)
    }

    @Test func mergeKeepsTheLargerCountAndTheLaterUse() {
        let stored = LearnedEntry(context: "", key: "word", display: "Word", count: 9, lastUsed: 50)
        let ours = LearnedEntry(context: "", key: "word", display: "word", count: 2, lastUsed: 40)
        #expect(
            LearnedMerge.merged(stored: stored, ours: ours)
                == LearnedEntry(context: "", key: "word", display: "Word", count: 9, lastUsed: 50))
        #expect(LearnedMerge.merged(stored: nil, ours: ours) == ours)
    }
}

@Suite struct LearnedEntryValidationTests {
    private func entry(_ display: String, count: Double = 1, lastUsed: Int64 = 1, context: String = "") -> LearnedEntry
    {
        LearnedEntry(context: context, key: WordText.key(display), display: display, count: count, lastUsed: lastUsed)
    }

    @Test func numbersAreBroughtIntoRange() {
        #expect(entry("word", count: 1e300).sanitized()?.count == LearnedEntry.maximumCount)
        #expect(entry("word", lastUsed: -5).sanitized()?.lastUsed == 0)
        #expect(entry("word", lastUsed: .max).sanitized()?.lastUsed == LearnedEntry.maximumLastUsed)
        for bad in [0, -1, .nan, .infinity, -.infinity] as [Double] {
            #expect(entry("word", count: bad).sanitized() == nil)
        }
        #expect(entry("word", count: 2.5).sanitized() == entry("word", count: 2.5))
    }

    @Test func textNoWordCanHaveIsDropped() {
        for bad in [
            "ev\u{1B}[31mil", "a\u{202E}b", "zero\u{200B}width", "line\u{2028}sep", "tab\tbed", "",
            String(repeating: "a", count: 41), "pri\u{E000}vate",
        ] {
            #expect(entry(bad).sanitized() == nil, "\(bad.unicodeScalars.map { $0.value })")
        }
        #expect(entry("café").sanitized() != nil)
        #expect(entry("word", context: "the old").sanitized() != nil)
        #expect(entry("word", context: "the\u{1B}old").sanitized() == nil)
    }

    @Test func storableWordsAreWholeWords() {
        #expect(LearningPolicy.isStorableWord("don't"))
        #expect(LearningPolicy.isStorableWord("Straße"))
        #expect(!LearningPolicy.isStorableWord("\u{1B}word"))
        #expect(!LearningPolicy.isStorableWord("word."))
        #expect(!LearningPolicy.isStorableWord("two words"))
        #expect(!LearningPolicy.isStorableWord("abc123"))
    }
}

@Suite struct UserModelFileTests {
    @Test func aCleanExportRoundTrips() {
        let entries = [
            LearnedEntry(context: "", key: "cat", display: "Cat", count: 2.5, lastUsed: 100),
            LearnedEntry(context: "the", key: "cat", display: "cat", count: 1, lastUsed: 0),
        ]
        let parsed = UserModelFile.parse(UserModelFile.write(entries))
        #expect(parsed.problems == [])
        #expect(Set(parsed.entries) == Set(entries))
    }

    @Test func hostileLinesAreRefusedByLineNumber() {
        let lines = [
            "\tcat\tcat\t1e300\t1",  // 1
            "\tcat\tcat\t-1\t1",
            "\tcat\tcat\tnan\t1",
            "\tcat\tcat\tinf\t1",
            "\tcat\tcat\t1\t1.5",  // 5
            "\tcat\tcat\t1\t-3",
            "\tcat\tcat\tmany\t1",
            "\tev\u{1B}il\tev\u{1B}il\t1\t1",
            "\tab\u{202E}c\tab\u{202E}c\t1\t1",
            "\tca\u{FFFD}t\tca\u{FFFD}t\t1\t1",  // 10
            "\t" + String(repeating: "a", count: 500) + "\ta\t1\t1",
            "\tCat\tcat\t1\t1",
            "x\u{7}y\tcat\tcat\t1\t1",
            "\tcat\tcat\t1",
            "\tdog\tdog\t3\t1700000000",  // 15: the only good line
        ]
        let parsed = UserModelFile.parse(lines.joined(separator: "\n") + "\n")
        #expect(
            parsed.entries == [LearnedEntry(context: "", key: "dog", display: "dog", count: 3, lastUsed: 1_700_000_000)]
        )
        #expect(parsed.problems.map(\.line) == Array(1...14))
        #expect(parsed.problems[0].reason.contains("count"))
        #expect(parsed.problems[4].reason.contains("last-used"))
        #expect(parsed.problems[9].reason.contains("UTF-8"))
        // Reasons never quote the line's words.
        #expect(!parsed.problems.contains { $0.reason.contains("cat") || $0.reason.contains("ev") })
    }
}
