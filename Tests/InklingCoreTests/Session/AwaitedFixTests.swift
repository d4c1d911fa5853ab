import InklingCore
import Testing

private let applyFix = KeyEvent.key(Keysym.returnKey, modifiers: [.control, .alt])

/// A field that reports its text, has reported the start, and then reports nothing until told.
private func lateReportingField(reporting: FakeField.Reporting = .codePoints, text: String = "") -> FakeField {
    let field = FakeField(reporting: reporting, text: text)
    field.holdsReports = true
    return field
}

@Suite("A fix waits for the application's report")
struct AwaitedFixTests {
    @Test func aReportAfterTheFixKeyProvesTheWordAndTheFixIsApplied() {
        let field = lateReportingField()
        field.type("I saw teh cat ")
        #expect(field.auxiliary == "teh → the")
        field.press(applyFix)
        #expect(field.text == "I saw teh cat ", "nothing is edited before the report")
        #expect(field.session.waitingFix != nil)
        field.deliverReport()
        #expect(field.text == "I saw the cat ")
        #expect(field.session.waitingFix == nil)
        #expect(field.session.fixRefusals == 0)
    }

    @Test func theWordComposingAtTheFixKeyIsCommittedAndTheReportOfItProvesThePlace() {
        // Firefox through GNOME Shell (2026-12-02): byte offsets, one batch per answer, emoji
        // before the text, and the report of `cat` only after the fix key.
        let field = lateReportingField(reporting: .utf8Bytes, text: "👨‍👩‍👧 👍🏽 ")
        field.batchesLikeTextInputV3 = true
        field.session.setFocusClient(
            FocusClient(contextPath: "/org/freedesktop/IBus/InputContext_7", name: "gnome-shell"))
        field.deliverReport()
        field.type("I saw teh cat")
        field.press(applyFix)
        #expect(field.text == "👨‍👩‍👧 👍🏽 I saw teh cat", "the composing word is committed, nothing else")
        field.deliverReport()
        #expect(field.text == "👨‍👩‍👧 👍🏽 I saw the cat")
    }

    @Test func withoutAReportInTimeTheFixIsRefusedAndSaysWhy() throws {
        let field = lateReportingField()
        field.type("I saw teh cat ")
        field.press(applyFix)
        let waiting = try #require(field.session.waitingFix)
        #expect(field.session.awaitedReportTimedOut(serial: waiting.serial + 1).isEmpty, "another wait's timer")
        field.apply(field.session.awaitedReportTimedOut(serial: waiting.serial))
        #expect(field.auxiliary == FixRefusal.unconfirmed.description)
        #expect(field.session.lastFixRefusal == .unconfirmed)
        field.deliverReport()
        #expect(field.text == "I saw teh cat ", "a report after the refusal applies nothing")
    }

    @Test func aKeyBeforeTheReportEndsTheWaitAndSaysWhy() {
        let field = lateReportingField()
        field.type("I saw teh cat ")
        field.press(applyFix)
        field.type("a")
        #expect(field.session.waitingFix == nil)
        #expect(field.auxiliary == FixRefusal.unconfirmed.description)
        field.deliverReport()
        #expect(field.visible == "I saw teh cat a", "the report of the key applies nothing")
    }

    @Test func aReportOfOtherTextRefusesTheFix() {
        let field = lateReportingField()
        field.type("I saw teh cat ")
        field.press(applyFix)
        field.edit("I saw teh dog ")  // a script rewrote the field meanwhile
        field.deliverReport()
        #expect(field.text == "I saw teh dog ")
        #expect(field.session.waitingFix == nil)
        #expect(field.auxiliary?.hasPrefix("fix not applied") == true)
    }

    @Test func anEarlierReportKeepsTheFixWaitingForTheNextOne() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh ")
        field.holdsReports = true
        field.type("cat ")
        field.press(applyFix)
        // The late echo of `I saw teh ` (before `cat `): not yet proof, not a change either.
        _ = field.session.setSurroundingText(SurroundingText(text: "I saw teh ", cursor: 10, anchor: 10))
        #expect(field.session.waitingFix != nil)
        #expect(field.text == "I saw teh cat ")
        field.deliverReport()
        #expect(field.text == "I saw the cat ")
    }

    @Test func focusLeavingEndsTheWaitWithoutEditingTheNextField() {
        let field = lateReportingField()
        field.type("I saw teh cat ")
        field.press(applyFix)
        field.focusOut()
        #expect(field.session.waitingFix == nil)
        field.apply(field.session.focusIn())
        field.deliverReport()
        #expect(field.text == "I saw teh cat ")
    }

    @Test func aResetEndsTheWaitAndSaysWhy() {
        let field = lateReportingField()
        field.type("I saw teh cat ")
        field.press(applyFix)
        field.apply(field.session.reset())
        #expect(field.session.waitingFix == nil)
        #expect(field.auxiliary == FixRefusal.unconfirmed.description)
    }
}
