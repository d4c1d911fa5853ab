import InklingCore
import Testing

/// Only the shown page of the candidates goes to IBus (issue 18): the page model in the core.
@Suite("Candidate table: only the shown page is sent")
struct SentPageTests {
    static func table(_ count: Int, pageSize: Int = 3, pagesForward: Int = 0) -> CandidateTable {
        var menu = CandidateMenu()
        menu.replace(items: (0..<count).map { "w\($0)" })
        _ = menu.table(pageSize: pageSize, keys: .functionKeys)
        for _ in 0..<pagesForward { menu.page(forward: true, pageSize: pageSize) }
        return menu.table(pageSize: pageSize, keys: .functionKeys)
    }

    @Test func theFirstPageIsSentWithOnePlaceholderForTheLaterPages() {
        let sent = Self.table(7).sentPage
        #expect(sent.candidates == ["w0", "w1", "w2", ""], "later pages: one empty placeholder, never their words")
        #expect(sent.cursor == 0 && sent.pageSize == 3)
        #expect(sent.labels == ["F1", "F2", "F3"])
    }

    @Test func aLaterPageKeepsItsPlaceBehindPlaceholders() {
        let sent = Self.table(7, pagesForward: 1).sentPage
        #expect(sent.candidates == ["", "", "", "w3", "w4", "w5", ""])
        #expect(sent.cursor == 3, "a global index: panels find page 2 from it")
        #expect(sent.candidates[sent.cursor] == "w3")
    }

    @Test func theLastPageHasNoPlaceholderAfterIt() {
        let sent = Self.table(7, pagesForward: 2).sentPage
        #expect(sent.candidates == ["", "", "", "", "", "", "w6"])
        #expect(sent.cursor == 6)
    }

    @Test func aSinglePageIsSentAsItIs() {
        let full = Self.table(3)
        #expect(full.sentPage == full)
        #expect(Self.table(1).sentPage.candidates == ["w0"])
    }

    @Test func theHighlightedRowIsOnTheSentPage() {
        var menu = CandidateMenu()
        menu.replace(items: (0..<10).map { "w\($0)" })
        _ = menu.table(pageSize: 5, keys: .digits)
        for _ in 0..<7 { menu.moveHighlight(by: 1) }  // the first move shows the highlight on row 0
        let sent = menu.table(pageSize: 5, keys: .digits).sentPage
        #expect(sent.cursorVisible && sent.cursor == 6)
        #expect(sent.candidates == ["", "", "", "", "", "w5", "w6", "w7", "w8", "w9"])
        #expect(sent.labels == ["1", "2", "3", "4", "5"])
    }

    @Test func marksStayOnTheSentPage() {
        var menu = CandidateMenu()
        menu.replace(items: ["the", "tea", "ten"], marks: [true, false, false])
        let sent = menu.table(pageSize: 2, keys: .functionKeys, mark: " *").sentPage
        #expect(sent.candidates == ["the *", "tea", ""])
    }

    @Test func theMenuRemembersWhatItSent() {
        var menu = CandidateMenu()
        #expect(menu.lastSent == nil)
        menu.replace(items: (0..<7).map { "w\($0)" })
        let table = menu.table(pageSize: 3, keys: .functionKeys)
        #expect(menu.lastSent == table.sentPage)
    }
}

/// Paging through the session with only the shown page sent: keys, labels and clicks still act
/// on the page the user sees, and an unchanged page is not sent again.
@Suite("Input session: paging the sent page")
struct SessionPagingTests {
    @Test func eachPageIsSentWithItsOwnWordsAndTheKeysPickFromIt() throws {
        let field = FakeField()
        field.type("c")
        let all = field.session.currentCandidates
        let first = try #require(field.table)
        try #require(all.count > first.pageSize + 1)
        let size = first.pageSize
        #expect(first.sentPage.candidates == Array(all[0..<size]) + [""])
        #expect(field.press(.key(Keysym.pageDown)))
        let second = try #require(field.table).sentPage
        let end = min(all.count, 2 * size)
        #expect(second.candidates.prefix(size).allSatisfy { $0.isEmpty })
        #expect(Array(second.candidates[size..<end]) == Array(all[size..<end]))
        #expect(second.cursor == size && !second.cursorVisible)
        field.key(Keysym.f1 + 1)
        #expect(field.text == all[size + 1], "F2 picks the second row of the page shown")
    }

    @Test func aClickOnTheSecondPageSelectsTheClickedRow() throws {
        let field = FakeField()
        field.type("c")
        let all = field.session.currentCandidates
        let size = try #require(field.table).pageSize
        try #require(all.count > size + 2)
        #expect(field.press(.key(Keysym.pageDown)))
        field.apply(field.session.candidateClicked(pageIndex: 2).effects)
        #expect(field.text == all[size + 2])
    }

    @Test func pagingBackSendsTheFirstPageAgain() throws {
        let field = FakeField()
        field.type("c")
        let first = try #require(field.table).sentPage
        #expect(field.press(.key(Keysym.pageDown)))
        #expect(field.press(.key(Keysym.pageUp)))
        #expect(try #require(field.table).sentPage == first)
    }

    @Test func theHighlightMovesAcrossPagesAndSpaceCommitsIt() throws {
        let field = FakeField()
        field.type("c")
        let all = field.session.currentCandidates
        let size = try #require(field.table).pageSize
        try #require(all.count > size + 1)
        for _ in 0...(size + 1) { #expect(field.press(.key(Keysym.down))) }
        let sent = try #require(field.table).sentPage
        #expect(sent.cursor == size + 1 && sent.cursorVisible)
        #expect(sent.candidates[sent.cursor] == all[size + 1], "the highlighted row is on the page sent")
        #expect(field.press(.key(Keysym.space)))
        #expect(field.text == all[size + 1] + " ")
    }

    @Test func anUnchangedPageIsNotSentAgain() throws {
        let field = FakeField()
        field.type("th")
        let shown = try #require(field.table)
        // A setting that changes nothing the table shows: the candidates are computed again.
        var settings = field.session.settings
        settings.dictationDevice = "another microphone"
        field.session.apply(settings)
        #expect(field.session.refreshSuggestions().isEmpty, "the same page: nothing to send")
        #expect(field.session.currentCandidates == shown.candidates)
        // A page that does change is sent.
        settings.pageSize = shown.pageSize - 1
        field.session.apply(settings)
        let effects = field.session.refreshSuggestions()
        #expect(effects.contains { if case .updateLookupTable = $0 { return true } else { return false } })
    }

    @Test func aHiddenTableIsSentAgainEvenWhenUnchanged() throws {
        let field = FakeField()
        field.type("th")
        #expect(field.table != nil)
        #expect(field.press(.key(Keysym.escape)))
        #expect(field.table == nil)
        var settings = field.session.settings
        settings.dictationDevice = "another microphone"
        field.session.apply(settings)
        let effects = field.session.refreshSuggestions()
        #expect(effects.contains { if case .updateLookupTable = $0 { return true } else { return false } })
    }
}
