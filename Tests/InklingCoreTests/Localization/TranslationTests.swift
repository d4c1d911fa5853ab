import Testing

@testable import InklingCore

/// `tr` and `trn`: named placeholders filled once, the installed lookup used.
///
/// The lookup is process-wide and other suites run in parallel, so the lookup installed here
/// translates only msgids of its own and leaves every other text as it is.
@Suite(.serialized) struct TranslationTests {
    @Test func placeholdersAreFilledByNameInAnyOrder() {
        #expect(Translation.fill("{b} before {a}", ["a": "1", "b": "2"]) == "2 before 1")
        #expect(Translation.fill("no placeholders", ["a": "1"]) == "no placeholders")
    }

    @Test func aValueThatLooksLikeAPlaceholderIsNotExpandedAgain() {
        #expect(
            Translation.fill("forgot {word} and {other}", ["word": "{other}", "other": "x"]) == "forgot {other} and x")
    }

    @Test func unknownPlaceholdersAndLoneBracesStay() {
        #expect(Translation.fill("{missing} { and {word}", ["word": "w"]) == "{missing} { and w")
    }

    @Test func placeholderNamesAreListedInOrder() {
        #expect(Translation.placeholders(in: "{typed} typed for {intended}") == ["typed", "intended"])
    }

    @Test func withoutAnInstalledLookupTheEnglishMsgidIsShown() {
        #expect(tr("test-only: {word} was not learned", ["word": "zorblax"]) == "test-only: zorblax was not learned")
        #expect(trn("test-only: one", "test-only: {count} many", count: 3, ["count": "3"]) == "test-only: 3 many")
        #expect(trn("test-only: one", "test-only: {count} many", count: 1, ["count": "1"]) == "test-only: one")
    }

    @Test func theInstalledLookupTranslatesAndPlaceholdersAreFilledAfterIt() {
        Translation.install(
            { $0 == "test-only: Language: {language}" ? "test-only: Sprache: {language}" : $0 },
            plural: { one, many, count in
                one == "test-only: {count} word"
                    ? (count == 1 ? "test-only: {count} Wort" : "test-only: {count} Wörter") : (count == 1 ? one : many)
            })
        defer { Translation.reset() }
        #expect(tr("test-only: Language: {language}", ["language": "Deutsch"]) == "test-only: Sprache: Deutsch")
        #expect(
            trn("test-only: {count} word", "test-only: {count} words", count: 2, ["count": "2"])
                == "test-only: 2 Wörter")
        #expect(tr("test-only: untouched") == "test-only: untouched")
    }

    /// Issue 18: reading the lookup out of its lock wrapped the stored closure in two more
    /// reabstraction thunks per call (Swift 6.3, a closure or tuple of closures in a `Mutex`), so
    /// every `tr` went deeper (and kept ~96 bytes): the engine translates its menu on each focus-in,
    /// and a long session would end in a stack overflow. The lookup must run at the same depth.
    @Test func everyLookupRunsAtTheSameStackDepth() {
        final class Depths: @unchecked Sendable {
            var singular: [Int] = []
            var plural: [Int] = []
        }
        @Sendable func stackAddress() -> Int {
            var marker = 0
            return withUnsafeMutablePointer(to: &marker) { Int(bitPattern: $0) }
        }
        let depths = Depths()
        Translation.install(
            { msgid in
                depths.singular.append(stackAddress())
                return msgid
            },
            plural: { one, many, count in
                depths.plural.append(stackAddress())
                return count == 1 ? one : many
            })
        defer { Translation.reset() }
        for _ in 0..<1_000 {
            _ = tr("test-only: depth")
            _ = trn("test-only: one", "test-only: many", count: 2)
        }
        #expect(depths.singular.count == 1_000 && depths.plural.count == 1_000)
        // Before the fix the 1000th call ran about 2000 thunks (tens of kB) deeper than the first.
        for (name, addresses) in [("tr", depths.singular), ("trn", depths.plural)] {
            let drift = abs((addresses.last ?? 0) - (addresses.first ?? 0))
            #expect(drift < 1024, "\(name)'s lookup ran \(drift) bytes deeper after 1000 calls")
        }
    }
}
