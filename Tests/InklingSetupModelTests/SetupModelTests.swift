import InklingCore
import Testing

@testable import InklingSetupModel

@Suite struct TypingChoicesTests {
    @Test func choiceRowsMapToTheSchemaValuesAndBack() {
        for choices in [SettingChoices.selectionKeys, .autocorrect] {
            #expect(choices.values.count == choices.labels.count)
            for (index, value) in choices.values.enumerated() {
                #expect(choices.index(of: value) == index)
                #expect(choices.value(at: index) == value)
            }
        }
        #expect(SettingChoices.autocorrect.index(of: "very-likely") == 1)
    }

    @Test func unknownValuesShowTheEnginesFallbackAndBadIndexesWriteNothing() {
        #expect(SettingChoices.autocorrect.index(of: "sometimes") == 0)
        #expect(SettingChoices.selectionKeys.index(of: "") == 0)
        #expect(SettingChoices.autocorrect.value(at: 3) == nil)
        #expect(SettingChoices.autocorrect.value(at: -1) == nil)
        // GTK_INVALID_LIST_POSITION as Int.
        #expect(SettingChoices.selectionKeys.value(at: Int(UInt32.max)) == nil)
    }

    @Test func pageSizeIsClampedAsTheEngineDoes() {
        #expect(PageSize.shown(0) == 1)
        #expect(PageSize.shown(12) == 9)
        #expect(PageSize.shown(7) == 7)
    }

    @Test func layoutRowsStartWithAutomaticAndNameEveryModelLayout() {
        #expect(LayoutChoices.values.first == "auto")
        #expect(LayoutChoices.values.contains("qwertz"))
        for name in LayoutChoices.values.dropFirst() { #expect(KeyboardLayout.named(name).name == name) }
        #expect(LayoutChoices.index(of: "dvorak") == 0)
        #expect(LayoutChoices.index(of: "azerty") == LayoutChoices.values.firstIndex(of: "azerty"))
    }
}

@Suite struct ShortcutTests {
    @Test func acceptedShortcutsAreExactlyWhatTheEngineParses() {
        let cases: [(String, ShortcutModifiers)] = [
            ("Return", [.control, .alt]), ("k", [.control, .alt]), ("K", [.control, .alt, .shift]), ("F5", []),
            ("space", [.control]), ("Page_Up", [.alt]), ("period", [.control]),
        ]
        for (key, modifiers) in cases {
            guard case .accepted(let accelerator) = Shortcut.record(keyName: key, modifiers: modifiers) else {
                Issue.record("\(key) refused")
                continue
            }
            #expect(KeyBinding(accelerator: accelerator) != nil, "\(accelerator)")
        }
        #expect(Shortcut.record(keyName: "Return", modifiers: [.control, .alt]) == .accepted("<Control><Alt>Return"))
        #expect(Shortcut.record(keyName: "K", modifiers: [.control, .shift]) == .accepted("<Control><Shift>k"))
    }

    @Test func keysTheEngineCannotParseAreRefusedWithASentence() {
        for key in ["Insert", "KP_Enter", "F13", "dead_acute", "Print", "odiaeresis"] {
            guard case .refused(let why) = Shortcut.record(keyName: key, modifiers: [.control]) else {
                Issue.record("\(key) accepted")
                continue
            }
            #expect(why.hasPrefix("Inkling cannot use Ctrl+"))
            #expect(KeyBinding(accelerator: "<Control>\(key)") == nil)
        }
    }

    @Test func printableKeysNeedControlAltOrSuper() {
        #expect(
            Shortcut.record(keyName: "k", modifiers: []) == .refused("K alone is used for typing: add Control or Alt."))
        #expect(
            Shortcut.record(keyName: "space", modifiers: [.shift])
                == .refused("Shift+Space alone is used for typing: add Control or Alt."))
        #expect(Shortcut.record(keyName: "k", modifiers: [.superKey]) == .accepted("<Super>k"))
    }

    @Test func modifiersAloneWaitEscapeCancelsBackspaceDisables() {
        #expect(Shortcut.record(keyName: "Control_L", modifiers: [.control]) == .waiting)
        #expect(Shortcut.record(keyName: "Alt_R", modifiers: []) == .waiting)
        #expect(Shortcut.record(keyName: "Escape", modifiers: []) == .cancelled)
        #expect(Shortcut.record(keyName: "BackSpace", modifiers: []) == .disabled)
        #expect(Shortcut.record(keyName: "BackSpace", modifiers: [.control]) == .accepted("<Control>BackSpace"))
    }

    @Test func labelsReadLikeKeys() {
        #expect(Shortcut.label(accelerator: "<Control><Alt>Return") == "Ctrl+Alt+Return")
        #expect(Shortcut.label(accelerator: "<Control><Alt>k") == "Ctrl+Alt+K")
        #expect(Shortcut.label(accelerator: "<Primary>space") == "Ctrl+Space")
        #expect(Shortcut.label(accelerator: " ") == "Off")
        #expect(Shortcut.label(accelerator: "<Hyper>x") == "Not understood (<Hyper>x)")
    }
}

@Suite struct HeartbeatTests {
    @Test func pathIsInTheSessionRuntimeFolderOnly() {
        #expect(Heartbeat.path(runtimeDirectory: "/run/user/1000") == "/run/user/1000/inkling/engine-heartbeat")
        #expect(Heartbeat.path(runtimeDirectory: nil) == nil)
        #expect(Heartbeat.path(runtimeDirectory: "relative") == nil)
    }

    @Test func contentsRoundTrip() {
        #expect(Heartbeat.processID(in: Heartbeat.contents(processID: 4242)) == 4242)
        #expect(Heartbeat.processID(in: "") == nil)
        #expect(Heartbeat.processID(in: "-3\n") == nil)
        #expect(Heartbeat.processID(in: "abc") == nil)
    }

    @Test func statusFromAgeAndProcess() {
        #expect(Heartbeat.status(modified: nil, now: 1000, processRuns: false) == .notRunning)
        #expect(Heartbeat.status(modified: 990, now: 1000, processRuns: true) == .running)
        #expect(Heartbeat.status(modified: 990, now: 1000, processRuns: false) == .stopped)
        #expect(
            Heartbeat.status(modified: 1000 - Int64(Heartbeat.staleAfter) - 1, now: 1000, processRuns: true)
                == .notResponding)
        // Clock set back: not stale.
        #expect(Heartbeat.status(modified: 5000, now: 1000, processRuns: true) == .running)
        #expect(Heartbeat.Status.running.sentence == "Inkling is running in this session.")
    }
}

@Suite struct PackModelTests {
    @Test func listOutputParses() {
        let output =
            "de\tDeutsch\t1\t2048 KiB\tavailable\nen\tEnglish\t3\t1500 KiB\tbundled\nfr\tFrançais\t1\t900 KiB\tinstalled, needs Inkling 9.0\nru\tРусский\t1\t10 KiB\trefused URL (https:// only)\nno pack manifest yet: run …\n"
        let rows = PackRow.parse(listOutput: output)
        #expect(rows.map(\.language) == ["de", "en", "fr", "ru"])
        #expect(
            rows[0] == PackRow(language: "de", displayName: "Deutsch", version: "1", sizeKiB: 2048, state: .available))
        #expect(rows[0].canDownload && !rows[0].canRemove && !rows[0].canChoose)
        #expect(rows[1].state == .bundled && rows[1].canChoose && !rows[1].canRemove)
        #expect(rows[2].state == .installed && rows[2].needsVersion == "9.0")
        #expect(rows[3].state == .refused && !rows[3].canDownload)
        #expect(rows[0].subtitle == "version 1 · 2 MB · not installed")
        #expect(
            PackRow.parse(listOutput: "no pack manifest yet: run 'inkling packs update --manifest-url URL'\n").isEmpty)
    }

    @Test func progressIsAFractionWithinTheBar() {
        #expect(PackProgress.fraction(written: 0, expected: 100) == 0)
        #expect(PackProgress.fraction(written: 50, expected: 100) == 0.5)
        #expect(PackProgress.fraction(written: 500, expected: 100) == 1)
        #expect(PackProgress.fraction(written: 5, expected: 0) == 0)
        #expect(
            PackProgress.isPartial(
                PackDownload.partialName(for: "de.inkpack", processID: 77, nonce: 9), language: "de", processID: 77))
        #expect(
            !PackProgress.isPartial(
                PackDownload.partialName(for: "de.inkpack", processID: 78, nonce: 9), language: "de", processID: 77))
        #expect(
            !PackProgress.isPartial(
                PackDownload.partialName(for: "de.inkpack", processID: 77, nonce: 9), language: "d", processID: 77))
    }

    @Test func errorsBecomeReadableSentences() {
        let download = "Downloading German"
        #expect(
            PackMessage.sentence(
                forError: "inkling: download of Deutsch failed: Couldn't connect to server; nothing was installed",
                action: download)
                == "Downloading German failed. No download server could be reached. Check the network connection and try again."
        )
        #expect(
            PackMessage.sentence(
                forError: "inkling: download of Deutsch failed: Couldn't resolve host name; nothing was installed",
                action: download
            ).contains("could not be found"))
        #expect(
            PackMessage.sentence(
                forError: "inkling: the downloaded Deutsch pack was refused: SHA-256 mismatch; nothing was installed",
                action: download
            ).contains("does not match its checksum"))
        #expect(
            PackMessage.sentence(
                forError: "inkling: cannot create /x/.de.part: No space left on device", action: download
            ).contains("The disk is full"))
        #expect(
            PackMessage.sentence(
                forError: "inkling: download of Deutsch failed: the server answered HTTP 404; nothing was installed",
                action: download
            ).contains("HTTP 404"))
        #expect(
            PackMessage.sentence(
                forError: "inkling: download of Deutsch failed: the server answered HTTP 503; nothing was installed",
                action: download
            ).contains("(HTTP 503)"))
        #expect(
            PackMessage.sentence(forError: "inkling: something odd", action: "Removing German")
                == "Removing German failed. Something odd.")
        #expect(
            PackMessage.sentence(forError: "", action: "Removing German")
                == "Removing German failed. It failed without a message.")
    }
}

@Suite struct LearnedWordsModelTests {
    let rows = [
        LearnedWordRow(word: "Inkling", count: 3, lastUsed: 10),
        LearnedWordRow(word: "ink", count: 9, lastUsed: 5),
        LearnedWordRow(word: "zebra", count: 1, lastUsed: 0),
    ]

    @Test func searchIgnoresCaseAndOrdersByUse() {
        #expect(LearnedWordRow.filter(rows, query: "INK").map(\.word) == ["ink", "Inkling"])
        #expect(LearnedWordRow.filter(rows, query: "").map(\.word) == ["ink", "Inkling", "zebra"])
        #expect(LearnedWordRow.filter(rows, query: " ", limit: 1).map(\.word) == ["ink"])
        #expect(LearnedWordRow.filter(rows, query: "q").isEmpty)
    }

    @Test func textsSayWhatIsShown() {
        #expect(rows[2].subtitle(lastUsedText: "-") == "used once")
        #expect(rows[1].subtitle(lastUsedText: "2026-12-01") == "used 9 times · last 2026-12-01")
        #expect(LearnedWordRow.summary(total: 0, shown: 0, query: "") == "Inkling has not learned any words yet.")
        #expect(LearnedWordRow.summary(total: 500, shown: 200, query: "").contains("200 most used"))
        #expect(LearnedWordRow.summary(total: 3, shown: 0, query: "q") == "No learned word contains “q”.")
        #expect(LearnedWordRow.wipeConfirmation(total: 3).contains("all 3 learned words"))
    }
}

/// A fake Inkling Server account, as the Cloud page's tests use it.
final class FakeAccountService: AccountService {
    var current: AccountStatus = .signedOut
    var devices = 0
    func status(server: String) -> AccountStatus { current }
    func signIn(server: String, username: String, password: String) -> AccountResult {
        guard password == "right" else {
            return .failed(AccountForm.failure(output: "inkling: wrong user name or password"))
        }
        devices += 1
        current = .signedIn(server: server, username: username)
        return .done(current)
    }
    func signOut(server: String) -> AccountResult {
        devices -= 1
        current = .signedOut
        return .done(current)
    }
    func signOutEverywhere(server: String) -> AccountResult {
        devices = 0
        current = .signedOut
        return .done(current)
    }
}

@Suite struct AccountModelTests {
    @Test func formIsCheckedBeforeAnythingIsSent() {
        #expect(
            AccountForm.problem(server: "", username: "a", password: "b") == "Enter the address of the Inkling Server.")
        #expect(
            AccountForm.problem(server: "http://example.org", username: "a", password: "b")?.contains("https://")
                == true)
        #expect(
            AccountForm.problem(server: "https://example.org", username: " ", password: "b") == "Enter your user name.")
        #expect(
            AccountForm.problem(server: "https://example.org", username: "a", password: "") == "Enter your password.")
        #expect(AccountForm.problem(server: "http://127.0.0.1:8080", username: "a", password: "b") == nil)
    }

    @Test func argumentsMatchInklingAccountAndNeverCarryThePassword() {
        #expect(
            AccountForm.arguments(signIn: " https://s.example ", username: "ann") == [
                "account", "login", "--server", "https://s.example", "--user", "ann",
            ])
        #expect(AccountForm.statusArguments(server: "https://s") == ["account", "status", "--server", "https://s"])
        #expect(
            AccountForm.signOutArguments(server: "https://s", everywhere: true) == [
                "account", "logout", "--server", "https://s", "--everywhere",
            ])
        #expect(
            AccountForm.signOutArguments(server: "https://s", everywhere: false) == [
                "account", "logout", "--server", "https://s",
            ])
        #expect(AccountForm.server(typed: " ", endpoint: "https://e") == "https://e")
        #expect(AccountForm.server(typed: "https://t", endpoint: "https://e") == "https://t")
    }

    @Test func statusOutputOfInklingAccountIsRead() {
        let signedIn =
            "Signed in to https://s.example as ann (device laptop, id 7).\nThe device token expires 2026-12-09 10:00 UTC unless the cloud check renews it before.\n"
        #expect(
            AccountForm.status(exitStatus: 0, output: signedIn)
                == .signedIn(server: "https://s.example", username: "ann"))
        #expect(AccountForm.status(exitStatus: 1, output: "Not signed in to https://s.example.\n") == .signedOut)
        #expect(
            AccountForm.status(
                exitStatus: 2,
                output: "inkling account status: no --server given and the cloud-endpoint setting is empty")
                == .signedOut)
        if case .unavailable = AccountForm.status(exitStatus: 2, output: "inkling: unknown command 'account'") {
        } else {
            Issue.record("a missing account command must read as unavailable")
        }
    }

    @Test func failuresReadAsSentences() {
        #expect(
            AccountForm.failure(output: "inkling: wrong user name or password") == "The user name or password is wrong."
        )
        #expect(
            AccountForm.failure(output: "inkling: cannot read the keyring: no Secret Service").hasPrefix("No keyring"))
        #expect(AccountForm.failure(output: "inkling: something else") == "something else")
    }

    @Test func fakeServiceSignsInAndOut() {
        let service: AccountService = FakeAccountService()
        #expect(
            service.signIn(server: "https://s", username: "ann", password: "wrong")
                == .failed("The user name or password is wrong."))
        #expect(
            service.signIn(server: "https://s", username: "ann", password: "right")
                == .done(.signedIn(server: "https://s", username: "ann")))
        #expect(service.status(server: "https://s").sentence == "Signed in to https://s as ann.")
        #expect(service.signOutEverywhere(server: "https://s") == .done(.signedOut))
    }

    @Test func cloudStatementSaysWhatAndWhen() {
        let off = CloudStatement.text(enabled: false, endpoint: "")
        #expect(off.hasPrefix("Off (the default): nothing you type leaves this computer."))
        #expect(off.contains("none is set"))
        let on = CloudStatement.text(enabled: true, endpoint: "https://llm.example/v1")
        #expect(on.contains("https://llm.example/v1") && on.contains("Never sent: passwords"))
    }
}
