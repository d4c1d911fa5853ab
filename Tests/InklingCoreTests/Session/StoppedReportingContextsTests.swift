import InklingCore
import Testing

private let applyFix = KeyEvent.key(Keysym.returnKey, modifiers: [.control, .alt])
private let withText: ClientCapabilities = [.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText]
private let withoutText: ClientCapabilities = [.preedit, .auxiliaryText, .lookupTable, .focus]
private let firefoxWindow = FocusClient(
    contextPath: "/org/freedesktop/IBus/InputContext_3", name: "gtk3-im:firefox-esr")
private let chromiumWindow = FocusClient(contextPath: "/org/freedesktop/IBus/InputContext_5", name: "gtk3-im:chromium")

/// Firefox on X11: the first field reports, then loses the capability after the first commit;
/// the focus moves to another field of the same window (the same input context), which comes
/// without the capability.
private func firefoxLaterField() -> FakeField {
    let field = FakeField(reporting: .none)
    field.session.setFocusClient(firefoxWindow)
    field.session.setCapabilities(withText)
    field.apply(field.session.focusIn())
    field.type("I ")
    field.session.setCapabilities(withoutText)
    field.apply(field.session.focusOut())
    field.session.setFocusClient(firefoxWindow)
    field.apply(field.session.focusIn())
    field.session.setCapabilities(withoutText)
    return field
}

@Suite("A window's input context that stopped reporting is named as such in its later fields")
struct StoppedReportingContextsTests {
    @Test func aLaterFieldOfTheSameContextSaysItStoppedReporting() {
        let field = firefoxLaterField()
        field.type("I saw teh cat ")
        #expect(field.auxiliary == "teh → the")
        let typed = field.text
        field.press(applyFix)
        #expect(field.text == typed, "nothing deleted")
        #expect(field.auxiliary == FixRefusal.stoppedReportingText.description)
    }

    @Test func anotherContextThatNeverReportedIsNotNamedStopped() {
        let field = firefoxLaterField()
        field.apply(field.session.focusOut())
        field.session.setFocusClient(chromiumWindow)
        field.session.setCapabilities(withText)
        field.apply(field.session.focusIn())
        field.session.setCapabilities(withoutText)
        field.type("I saw teh cat ")
        field.press(applyFix)
        #expect(field.auxiliary == FixRefusal.noSurroundingText.description)
    }

    @Test func aContextThatOffersItsTextAgainIsForgiven() {
        var contexts = StoppedReportingContexts()
        contexts.note("/a")
        #expect(contexts.contains("/a"))
        contexts.forget("/a")
        #expect(!contexts.contains("/a"))
    }

    @Test func theMemoryIsBounded() {
        var contexts = StoppedReportingContexts()
        for index in 0..<100 { contexts.note("/c\(index)") }
        #expect(!contexts.contains("/c0"))
        #expect(contexts.contains("/c99"))
    }
}
