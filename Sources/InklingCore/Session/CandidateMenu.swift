/// A list of candidates the user sees a page at a time: items, marks, highlight, paging and the
/// row labels, as one value (the session holds one for suggestions and one for the correction panel).
///
/// The page size the user sees is the one of the last drawn table: a changed setting applies from
/// the next redraw, so a selection key always means the row the user sees with its label.
public struct CandidateMenu: Equatable, Sendable {
    /// The candidates, best first.
    public private(set) var items: [String] = []
    /// Which items carry the mark (a suggestion that corrects a typo in the typed prefix).
    public private(set) var marks: [Bool] = []
    /// The highlighted item (global index); it also selects the page.
    public var cursor = 0
    /// Whether the highlight is shown (suggestions: only once the user moved it).
    public var cursorVisible = false
    /// Whether the table is on screen.
    public var isShown = false
    /// The page size of the table last drawn.
    public private(set) var shownPageSize = SessionSettings().pageSize
    /// What the last drawn table sent to IBus (`CandidateTable.sentPage`); it is on screen while `isShown`.
    public private(set) var lastSent: CandidateTable? = nil

    /// An empty, hidden menu.
    public init() {}

    /// Replaces the items; the highlight goes back, hidden, to the first one.
    public mutating func replace(items: [String], marks: [Bool]? = nil) {
        self.items = items
        self.marks = marks ?? Array(repeating: false, count: items.count)
        cursor = 0
        cursorVisible = false
    }

    /// Replaces the items and keeps the highlight: a redraw of a list that changed in place.
    public mutating func update(items: [String]) {
        self.items = items
        marks = Array(repeating: false, count: items.count)
    }

    /// Forgets the items and hides the table.
    public mutating func clear() {
        replace(items: [])
        isShown = false
    }

    /// The first item of the shown page.
    public var pageStart: Int { (cursor / shownPageSize) * shownPageSize }

    /// The highlighted item, when the highlight is shown.
    public var highlighted: String? { cursorVisible && cursor < items.count ? items[cursor] : nil }

    /// The item on the shown page's row `row` (0-based), if that row exists and has a label: a
    /// selection key beyond the page never picks an item the user cannot see.
    public func index(row: Int) -> Int? {
        guard row >= 0, row < min(9, shownPageSize) else { return nil }
        let index = pageStart + row
        return index < items.count ? index : nil
    }

    /// The item behind a click on row `row` of the shown page (any row of it, labelled or not).
    public func index(clickedRow row: Int) -> Int? {
        guard row >= 0, row < shownPageSize else { return nil }
        let index = pageStart + row
        return index < items.count ? index : nil
    }

    /// Moves the highlight by `step` rows, wrapping around; the first move only shows it, on the
    /// first (down) or last (up) row of the shown page.
    public mutating func moveHighlight(by step: Int) {
        guard !items.isEmpty else { return }
        if cursorVisible {
            cursor = (cursor + step + items.count) % items.count
        } else {
            // The last row of the page, computed without overflowing for a huge page size.
            cursor = step > 0 ? pageStart : pageStart + min(items.count - 1 - pageStart, shownPageSize - 1)
            cursorVisible = true
        }
    }

    /// Moves to the first item of the next or previous page (of `pageSize` items), staying within the list.
    public mutating func page(forward: Bool, pageSize: Int) {
        let pageSize = max(1, pageSize)
        let pages = items.count / pageSize + (items.count % pageSize == 0 ? 0 : 1)
        let current = cursor / pageSize
        let next = forward ? min(max(0, pages - 1), current + 1) : max(0, current - 1)
        cursor = next * pageSize
    }

    /// The table to draw with `pageSize` items a page and labels for `keys`; marked items end with `mark`.
    public mutating func table(pageSize: Int, keys: SelectionKeys, mark: String = "") -> CandidateTable {
        shownPageSize = max(1, pageSize)
        isShown = true
        let shown = zip(items, marks).map { $1 ? $0 + mark : $0 }
        let table = CandidateTable(
            candidates: shown, pageSize: shownPageSize, cursor: min(cursor, max(0, items.count - 1)),
            cursorVisible: cursorVisible,
            labels: Self.labels(pageSize: shownPageSize, keys: keys))
        lastSent = table.sentPage
        return table
    }

    /// The row labels of a page: the keys that select its rows (at most nine rows have one).
    public static func labels(pageSize: Int, keys: SelectionKeys) -> [String] {
        let rows = max(1, min(9, pageSize))
        switch keys {
        case .functionKeys: return Array(functionKeyLabels.prefix(rows))
        case .digits: return Array(digitLabels.prefix(rows))
        }
    }

    /// The nine labels of each kind, made once (a table is drawn after nearly every key).
    private static let functionKeyLabels = (1...9).map { "F\($0)" }
    private static let digitLabels = (1...9).map { "\($0)" }
}

extension CandidateTable {
    /// The table as the glue sends it to IBus: only the shown page's candidates (the cursor's
    /// page) carry text; the others are never sent. Empty placeholders stand before the page, so
    /// that the cursor stays a global index from which every panel finds the page (and its page
    /// number), and one stands after it when later pages exist, so that panels still offer the
    /// next page (GNOME Shell hides its page buttons for a single page). Panels show only the
    /// cursor's page, so a placeholder is never seen; paging is the engine's (page-up/page-down
    /// and cursor signals, which it answers with the new page).
    public var sentPage: CandidateTable {
        let size = max(1, pageSize)
        let start = min(candidates.count, (max(0, cursor) / size) * size)
        let end = min(candidates.count, start + size)
        var rows = [String](repeating: "", count: start)
        rows.reserveCapacity(end - start + 1)
        rows += candidates[start..<end]
        if end < candidates.count { rows.append("") }
        return CandidateTable(
            candidates: rows, pageSize: pageSize, cursor: cursor, cursorVisible: cursorVisible, labels: labels)
    }
}

/// A request from the candidate panel's own controls (its arrows and page buttons).
public enum CandidatePanelRequest: Sendable, CaseIterable {
    case pageUp, pageDown, cursorUp, cursorDown
}
