import InklingCore
import Testing

@testable import InklingSetupModel

@Suite struct MicrophoneChoicesTests {
    static let pactl = """
        0\talsa_output.pci-0000_00_1f.3.analog-stereo.monitor\tmodule-alsa-card.c\ts16le 2ch 44100Hz\tSUSPENDED
        1\talsa_input.pci-0000_00_1f.3.analog-stereo\tmodule-alsa-card.c\ts16le 2ch 44100Hz\tRUNNING
        2\tinkling_test_mic\tmodule-pipe-source.c\ts16le 1ch 16000Hz\tIDLE

        garbage line
        """

    @Test func sourcesAreTheSecondColumnWithoutMonitors() {
        #expect(
            MicrophoneChoices.sources(pactlShortSources: Self.pactl) == [
                "alsa_input.pci-0000_00_1f.3.analog-stereo", "inkling_test_mic",
            ])
        #expect(MicrophoneChoices.sources(pactlShortSources: "") == [])
    }

    @Test func theDefaultRowComesFirstAndAStoredSourceThatIsGoneKeepsARow() {
        let rows = MicrophoneChoices.rows(sources: ["a", "b"], stored: "")
        #expect(rows.map(\.device) == ["", "a", "b"])
        #expect(rows[0].label == MicrophoneChoices.defaultLabel)
        #expect(MicrophoneChoices.index(of: "", in: rows) == 0)
        #expect(MicrophoneChoices.index(of: "b", in: rows) == 2)

        let unplugged = MicrophoneChoices.rows(sources: ["a"], stored: "usb_mic")
        #expect(unplugged.map(\.device) == ["", "a", "usb_mic"])
        #expect(unplugged[2].label == "usb_mic (not connected)")
        // Showing the page must not change the setting: the stored source stays selected.
        #expect(MicrophoneChoices.index(of: "usb_mic", in: unplugged) == 2)
    }

    @Test func theHelperGetsDeviceOnlyForAChosenSource() {
        #expect(MicrophoneChoices.helperArguments(device: "") == [])
        #expect(MicrophoneChoices.helperArguments(device: "  ") == [])
        #expect(MicrophoneChoices.helperArguments(device: "inkling_test_mic") == ["--device", "inkling_test_mic"])
    }
}

@Suite struct DictationLanguageTests {
    @Test func onlyEnglishHasAModelAndOtherLanguagesAreToldSo() {
        #expect(DictationLanguage.summary(activeLanguage: "en").contains("only language with a speech model"))
        let german = DictationLanguage.summary(activeLanguage: "de")
        #expect(german.contains("no speech model"))
        #expect(german.contains("(de)"))
    }
}

@Suite struct DictationTestRunTests {
    static func line(
        _ type: String, text: String? = nil, level: Double? = nil, message: String? = nil, session: Int = 1
    ) -> String {
        DictationEvent(type: type, session: session, text: text, level: level, message: message).line
            .trimmed()
    }

    @Test func levelsMoveTheMeterAndFinalsAreShownButPartialsAreNot() {
        var run = DictationTestRun()
        #expect(run.isRunning)
        run.receive(Self.line("listening"))
        #expect(run.status == "Say something…")
        run.receive(Self.line("level", level: 0.6))
        #expect(run.level == 0.6)
        run.receive(Self.line("level", level: 3))
        #expect(run.level == 1)
        run.receive(Self.line("partial", text: "hello wor"))
        #expect(run.heard.isEmpty)
        run.receive(Self.line("final", text: "hello world"))
        run.receive(Self.line("final", text: "good morning"))
        #expect(run.status == "Heard: hello world good morning")
        run.receive(Self.line("stopped"))
        #expect(run.state == .finished)
        #expect(!run.isRunning)
        #expect(run.level == 0)
        #expect(run.status == "Heard: hello world good morning")
        // Nothing after the end counts.
        run.receive(Self.line("final", text: "late"))
        #expect(run.heardText == "hello world good morning")
    }

    @Test func errorsAndADeadHelperEndTheTestWithAReason() {
        var run = DictationTestRun()
        run.receive(Self.line("error", message: "no microphone"))
        #expect(run.state == .failed("no microphone"))
        #expect(run.status == "The test failed: no microphone")

        var dead = DictationTestRun()
        dead.receive(Self.line("listening"))
        dead.helperEnded()
        #expect(dead.state == .failed("the speech helper stopped"))

        var silent = DictationTestRun()
        silent.receive(Self.line("stopped"))
        silent.helperEnded()
        #expect(silent.state == .finished)
        #expect(silent.status.hasPrefix("Heard nothing"))
    }

    @Test func malformedLinesAndOtherSessionsAreIgnored() {
        var run = DictationTestRun()
        run.receive("not json")
        run.receive(Self.line("final", text: "other", session: 7))
        run.receive(Self.line("stopped", session: 7))
        #expect(run.isRunning)
        #expect(run.heard.isEmpty)
    }

    @Test func theRequestsAreValidHelperLines() {
        #expect(
            DictationRequest.parse(DictationTestRun.startLine.trimmed()) == DictationRequest(type: "start", session: 1))
        #expect(
            DictationRequest.parse(DictationTestRun.stopLine.trimmed()) == DictationRequest(type: "stop", session: 1))
    }
}
