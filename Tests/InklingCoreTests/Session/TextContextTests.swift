import InklingCore
import Testing

@Suite("Text context: what precedes the cursor, and how far it is trusted")
struct TextContextTests {
    /// A context after focus-in whose client reported `text` (cursor at the end).
    static func reported(_ text: String) -> TextContext {
        var context = TextContext()
        context.focusIn()
        let count = text.unicodeScalars.count
        _ = context.apply(text: text, cursor: count, anchor: count, shownPreedit: nil)
        return context
    }

    @Test func focusInForgetsTheTextUntilTheClientReports() {
        var context = Self.reported("Hello ")
        context.focusIn()
        #expect(!context.isKnown && context.before.isEmpty)
        #expect(context.reliability == .unknown)
        #expect(context.fixRefusal(clientReports: true) == .notReportedYet)
        #expect(context.apply(text: "Hi ", cursor: 3, anchor: 3, shownPreedit: nil) == .changed)
        #expect(context.isKnown && context.before == "Hi ")
        #expect(context.fixRefusal(clientReports: true) == nil)
    }

    @Test func theEchoOfTheEnginesOwnCommitChangesNothing() {
        var context = Self.reported("I ")
        context.inserted("saw ")
        #expect(context.unconfirmedCount == 4)
        #expect(context.fixRefusal(clientReports: true) == .unconfirmed)
        #expect(context.apply(text: "I saw ", cursor: 6, anchor: 6, shownPreedit: nil) == .unchanged)
        #expect(context.unconfirmedCount == 0, "echoed")
    }

    @Test func aLateEchoIsNotAChange() {
        var context = Self.reported("I ")
        context.inserted("saw ")
        context.inserted("the ")
        #expect(
            context.apply(text: "I saw ", cursor: 6, anchor: 6, shownPreedit: nil) == .unchanged, "an earlier state")
        #expect(context.before == "I saw the ")
        #expect(context.unconfirmedCount == 8, "still awaited")
    }

    @Test func aRealEditReplacesTheKnownText() {
        var context = Self.reported("I saw ")
        #expect(context.apply(text: "You saw ", cursor: 8, anchor: 8, shownPreedit: nil) == .changed)
        #expect(context.before == "You saw ")
    }

    @Test func aClientThatEchoesThePreeditIsProvenOnceAndStripped() {
        var context = Self.reported("I ")
        context.preeditShown("sa")
        #expect(context.apply(text: "I sa", cursor: 4, anchor: 4, shownPreedit: "sa") == .unchanged)
        #expect(context.clientEchoesPreedit)
        #expect(context.before == "I ")
    }

    @Test func aReportWithoutThePreeditDoesNotProveEchoes() {
        var context = Self.reported("I ")
        context.preeditShown("sa")
        #expect(context.apply(text: "I ", cursor: 2, anchor: 2, shownPreedit: "sa") == .unchanged)
        #expect(!context.clientEchoesPreedit)
    }

    @Test func aLateEchoPlusAPreeditIsRecognised() {
        var context = Self.reported("I ")
        context.inserted("saw ")
        context.preeditShown("th")
        // The client shows an earlier state ("I ") with the preedit appended.
        #expect(context.apply(text: "I th", cursor: 4, anchor: 4, shownPreedit: "th") == .unchanged)
        #expect(context.clientEchoesPreedit)
        #expect(context.before == "I saw ")
    }

    @Test func deletingBackwardStopsAwaitingTheDeletedText() {
        var context = Self.reported("a")
        context.inserted("b")
        context.deletedBackward()
        #expect(context.before == "a")
        #expect(context.unconfirmedCount == 0)
        #expect(context.fixRefusal(clientReports: true) == nil)
    }

    @Test func invalidateMakesThePositionUnknown() {
        var context = Self.reported("abc")
        context.invalidate()
        #expect(!context.isKnown && context.before.isEmpty)
        #expect(context.apply(text: "abc", cursor: 1, anchor: 1, shownPreedit: nil) == .changed)
        #expect(context.before == "a")
    }

    @Test func offsetsBeyondTheTextAreUnreliableButGiveAGuess() {
        // Qt: UTF-16 offsets, past the code-point length with an emoji before the cursor.
        var context = TextContext()
        context.focusIn()
        let text = "😀 hi"
        #expect(context.apply(text: text, cursor: 5, anchor: 5, shownPreedit: nil) == .guessed)
        #expect(context.before == "😀 hi")
        #expect(context.reliability == .unreliable)
        #expect(context.fixRefusal(clientReports: true) == .unreliableOffsets)
    }

    @Test func aSelectionRefusesFixes() {
        var context = TextContext()
        context.focusIn()
        _ = context.apply(SurroundingText(text: "abc", cursor: 3, anchor: 1), shownPreedit: nil)
        #expect(context.hasSelection)
        #expect(context.fixRefusal(clientReports: true) == .selection)
    }

    @Test func onlyUnreportedWhitespaceIsNamedAsSuch() {
        var context = Self.reported("word")
        context.inserted(" ")
        #expect(context.fixRefusal(clientReports: true) == .whitespaceNotReported)
    }

    @Test func aClientThatStopsReportingAfterUseIsNamedAsStopped() {
        var context = Self.reported("a")
        context.capabilityChanged(had: true, has: false)
        #expect(context.fixRefusal(clientReports: false) == .stoppedReportingText)
        var fresh = TextContext()
        fresh.focusIn()
        fresh.capabilityChanged(had: true, has: false)
        #expect(fresh.fixRefusal(clientReports: false) == .noSurroundingText)
    }

    @Test func longTextIsTrimmedToItsEnd() {
        var context = Self.reported("")
        context.inserted(String(repeating: "a", count: 2001))
        #expect(context.before.unicodeScalars.count == 1000)
    }
}
