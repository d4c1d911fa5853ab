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
}
