import InklingCore
import Testing

@Suite("Candidate menu: paging, highlight and labels")
struct CandidateMenuTests {
    static func menu(_ count: Int, pageSize: Int = 3) -> CandidateMenu {
        var menu = CandidateMenu()
        menu.replace(items: (0..<count).map { "w\($0)" })
        _ = menu.table(pageSize: pageSize, keys: .functionKeys)
        return menu
    }

    @Test func labelsNameTheKeysThatSelectTheRows() {
        #expect(CandidateMenu.labels(pageSize: 3, keys: .functionKeys) == ["F1", "F2", "F3"])
        #expect(CandidateMenu.labels(pageSize: 3, keys: .digits) == ["1", "2", "3"])
        #expect(CandidateMenu.labels(pageSize: 20, keys: .digits).count == 9, "only nine rows have a key")
        #expect(CandidateMenu.labels(pageSize: 0, keys: .functionKeys) == ["F1"])
    }

    @Test func theFirstMoveShowsTheHighlightOnTheFirstOrLastRowOfThePage() {
        var down = Self.menu(7)
        down.moveHighlight(by: 1)
        #expect(down.cursorVisible && down.cursor == 0)
        var up = Self.menu(7)
        up.moveHighlight(by: -1)
        #expect(up.cursorVisible && up.cursor == 2, "the last row of the first page")
        up.moveHighlight(by: -1)
        #expect(up.cursor == 1)
    }

    @Test func theHighlightWrapsAround() {
        var menu = Self.menu(4)
        menu.moveHighlight(by: 1)
        menu.moveHighlight(by: -1)
        #expect(menu.cursor == 3)
        menu.moveHighlight(by: 1)
        #expect(menu.cursor == 0)
    }

    @Test func pagingStaysWithinTheList() {
        var menu = Self.menu(7)
        menu.page(forward: true, pageSize: 3)
        #expect(menu.cursor == 3)
        menu.page(forward: true, pageSize: 3)
        menu.page(forward: true, pageSize: 3)
        #expect(menu.cursor == 6, "the last page")
        menu.page(forward: false, pageSize: 3)
        menu.page(forward: false, pageSize: 3)
        menu.page(forward: false, pageSize: 3)
        #expect(menu.cursor == 0)
    }

    @Test func rowsAreCountedOnTheShownPage() {
        var menu = Self.menu(7)
        #expect(menu.index(row: 0) == 0)
        #expect(menu.index(row: 3) == nil, "beyond the page")
        menu.page(forward: true, pageSize: 3)
        #expect(menu.index(row: 1) == 4)
        menu.page(forward: true, pageSize: 3)
        #expect(menu.index(row: 1) == nil, "beyond the list")
        #expect(menu.index(row: -1) == nil)
    }

    @Test func aChangedPageSizeAppliesFromTheNextDraw() {
        var menu = Self.menu(12, pageSize: 3)
        menu.page(forward: true, pageSize: 10)
        #expect(menu.cursor == 10)
        #expect(menu.index(row: 0) == 9, "the drawn page size (3) still says which rows are shown")
        let table = menu.table(pageSize: 10, keys: .functionKeys)
        #expect(table.pageSize == 10)
        #expect(menu.index(row: 0) == 10)
    }

    @Test func marksAreShownAfterTheirItems() {
        var menu = CandidateMenu()
        menu.replace(items: ["the", "tea"], marks: [true, false])
        let table = menu.table(pageSize: 5, keys: .functionKeys, mark: " *")
        #expect(table.candidates == ["the *", "tea"])
        #expect(menu.isShown)
        menu.clear()
        #expect(!menu.isShown && menu.items.isEmpty)
    }
}
