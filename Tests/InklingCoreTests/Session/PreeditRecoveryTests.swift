import InklingCore
import Testing

private let qt = FocusClient(contextPath: "/org/freedesktop/IBus/InputContext_7", name: "QIBusInputContext")
private let gtkWindow = FocusClient(contextPath: "/org/freedesktop/IBus/InputContext_9", name: "gtk3-im:python3")

/// A field like KWrite's: Qt echoes the preedit in its reports.
private func qtField() -> FakeField {
    let field = FakeField(reporting: .codePoints)
    field.reportsPreedit = true
    field.session.setFocusClient(qt)
    field.apply(field.session.focusIn())
    return field
}

/// The focus goes to another application's field, where `typed` is typed, then comes back.
private func visitOtherWindow(_ field: FakeField, typing typed: String, returnAs client: FocusClient = qt) {
    let session = field.session
    session.setFocusClient(gtkWindow)
    _ = session.focusIn()
    for scalar in typed.unicodeScalars {
        _ = session.processKey(scalar == " " ? .key(Keysym.space) : .typing(scalar))
        _ = session.refreshSuggestions()
    }
    _ = session.focusOut()
    session.setFocusClient(client)
    field.apply(session.focusIn())
}

@Suite("The composing word a Qt window loses when it loses the focus comes back")
struct PreeditRecoveryTests {
    @Test func theLostWordIsComposingAgainWhenTheFocusReturns() {
        let field = qtField()
        field.type("We saw hel")
        #expect(field.preedit?.text == "hel")
        field.focusOutLosingPreedit()
        #expect(field.visible == "We saw ")
        visitOtherWindow(field, typing: "x ")
        #expect(field.preedit?.text == "hel", "shown again where it was")
        field.report()
        field.type("lo ")
        #expect(field.text == "We saw hello ", "exactly once")
    }

    @Test func aWordTheClientCommittedItselfIsNotShownAgain() {
        // GTK commits its own copy of the preedit on focus-out.
        let field = FakeField(reporting: .codePoints)
        field.session.setFocusClient(gtkWindow)
        field.apply(field.session.focusIn())
        field.type("We saw hel")
        field.focusOut()
        field.session.setFocusClient(gtkWindow)
        field.apply(field.session.focusIn())
        field.report()
        #expect(field.preedit == nil)
        field.type(" ")
        #expect(field.text == "We saw hel ")
    }

    @Test func anotherPlaceTakesTheRecoveredWordBackOut() {
        // Another window of the same Qt application shares its input context.
        let field = qtField()
        field.type("We saw hel")
        field.focusOutLosingPreedit()
        field.edit("Another document, ")
        visitOtherWindow(field, typing: "")
        #expect(field.preedit?.text == "hel")
        field.report()
        #expect(field.preedit == nil, "not the place the word was lost")
        #expect(field.visible == "Another document, ")
    }

    @Test func whatWasTypedAfterTheRecoveredWordStaysWhenItIsTakenBack() {
        let field = qtField()
        field.type("We saw hel")
        field.focusOutLosingPreedit()
        field.edit("Another document, ")
        visitOtherWindow(field, typing: "")
        // A key before any report: the client's report after it shows another place.
        field.type("x")
        #expect(field.preedit?.text == "x", "\(String(describing: field.preedit))")
        #expect(field.text == "Another document, ")
    }

    @Test func aResetEndsTheRecovery() {
        // Qt resets when the focus moves between widgets of one window, committing its preedit.
        let field = qtField()
        field.type("We saw hel")
        field.focusOutLosingPreedit()
        visitOtherWindow(field, typing: "")
        field.apply(field.session.reset())
        field.report()
        #expect(field.preedit == nil)
    }

    @Test func onlyTheContextThatLostTheWordGetsItBack() {
        var recovery = PreeditRecovery()
        recovery.focusOut(client: qt, word: "hel", before: "We saw ")
        #expect(recovery.focusIn(client: gtkWindow) == nil)
        #expect(recovery.focusIn(client: nil) == nil)
        #expect(recovery.focusIn(client: qt) == "hel")
        #expect(recovery.focusIn(client: qt) == nil, "once")
    }

    @Test func nothingIsKeptWithoutTheTextBeforeTheWordOrFromClientsThatKeepTheirPreedit() {
        var recovery = PreeditRecovery()
        recovery.focusOut(client: qt, word: "hel", before: nil)
        #expect(recovery.lost == nil)
        recovery.focusOut(client: gtkWindow, word: "hel", before: "We saw ")
        #expect(recovery.lost == nil)
        recovery.focusOut(client: FocusClient(contextPath: "/x", name: "gnome-shell"), word: "hel", before: "")
        #expect(recovery.lost == nil)
        recovery.focusOut(client: nil, word: "hel", before: "We saw ")
        #expect(recovery.lost == nil)
    }

    @Test func aReportConfirmsOnlyTheSameTextBeforeTheWord() {
        var recovery = PreeditRecovery()
        recovery.focusOut(client: qt, word: "hel", before: "We saw ")
        _ = recovery.focusIn(client: qt)
        #expect(recovery.confirm(reportedBefore: "We saw ") == true)
        #expect(recovery.confirm(reportedBefore: "We saw ") == nil, "only the first report decides")
        recovery.focusOut(client: qt, word: "hel", before: "We saw ")
        _ = recovery.focusIn(client: qt)
        #expect(recovery.confirm(reportedBefore: "They saw ") == false)
    }
}
