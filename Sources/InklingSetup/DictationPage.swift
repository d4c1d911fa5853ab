import CGtk
import InklingCore
import InklingSetupModel

#if canImport(Glibc)
    import Glibc
#endif

/// Dictation: the switch (GSettings `dictation`, followed live by the engine), the key, the
/// microphone (`dictation-device`), a test with a level meter, the language, and where audio goes.
final class DictationPage {
    let app: SetupApp
    let widget: Widget
    private let microphone: Widget
    private var microphoneRows: [MicrophoneRow] = []
    private var rebuildingMicrophones = false
    private let meter: Widget
    private let testStatus: Widget
    private let testButton: Widget
    private var test: HelperTest?

    init(_ app: SetupApp) {
        self.app = app
        let settings = app.settings
        widget = page(title: tr("Dictation"), icon: "audio-input-microphone-symbolic", name: "dictation")

        let dictation = group(
            title: tr("Dictation"),
            description:
                tr(
                    "Speech is recognised on this computer by Inkling's speech helper (PocketSphinx). Audio never leaves the machine, and nothing heard is stored. Only finished sentences are typed, never in password fields."
                )
        )
        add(
            dictation,
            TypingPage.switchRow(
                settings, key: "dictation", title: tr("Dictation"),
                subtitle: tr("The dictation key starts and stops listening in the focused field")))
        add(dictation, ShortcutRow.make(app, key: "dictation-key", title: tr("Start and stop dictation")))
        let language = actionRow(title: tr("Language"))
        settings.watch("languages") {
            adw_action_row_set_subtitle(
                cast(language), DictationLanguage.summary(activeLanguage: settings.strings("languages").first ?? "en"))
        }
        add(dictation, language)
        add(page: widget, dictation)

        let check = group(
            title: tr("Microphone"),
            description: tr("Click Test, then say a sentence: what dictation would type appears below."))
        microphone = made(adw_combo_row_new())
        adw_preferences_row_set_title(cast(microphone), tr("Microphone"))
        add(check, microphone)
        let meterRow = actionRow(title: tr("Level"))
        meter = made(gtk_level_bar_new_for_interval(0, 1))
        gtk_widget_set_valign(meter, GTK_ALIGN_CENTER)
        gtk_widget_set_hexpand(meter, 1)
        gtk_widget_set_size_request(meter, 240, -1)
        name(meter, tr("Microphone level"))
        adw_action_row_add_suffix(cast(meterRow), meter)
        add(check, meterRow)
        // The row's subtitle says how the test goes and shows what was heard.
        let testRow = actionRow(title: tr("Test the microphone"), subtitle: tr("Not tested yet"))
        testStatus = testRow
        testButton = made(gtk_button_new_with_label(tr("Test")))
        add(check, testRow)
        add(page: widget, check)

        gtk_widget_set_valign(testButton, GTK_ALIGN_CENTER)
        name(testButton, tr("Test the microphone"))
        adw_action_row_add_suffix(cast(testRow), testButton)
        on(raw(testButton), "clicked") { [weak self] in self?.toggleTest() }
        let refresh = button(tr("Refresh"), accessibleName: tr("Refresh the microphones"), style: "flat") {
            [weak self] in
            self?.listMicrophones()
        }
        adw_action_row_add_suffix(cast(microphone), refresh)
        onNotify(raw(microphone), "selected") { [weak self] in self?.microphoneChosen() }
        settings.watch("dictation-device") { [weak self] in self?.showMicrophones() }
        if !settings.has("dictation-device") { setSensitive(microphone, false) }
        listMicrophones()
    }

    // MARK: Microphones

    private var sources: [String] = []

    /// Asks the sound server for its sources (`pactl`, see `MicrophoneChoices`).
    private func listMicrophones() {
        InklingCommand.run(["list", "short", "sources"], executable: "pactl") { [weak self] status, stdout, _ in
            guard let self else { return }
            self.sources = status == 0 ? MicrophoneChoices.sources(pactlShortSources: stdout) : []
            self.showMicrophones()
            adw_action_row_set_subtitle(
                cast(self.microphone),
                status == 0 ? tr("Dictation records from this source") : tr("No sound server answered"))
        }
    }

    private func showMicrophones() {
        let stored = app.settings.string("dictation-device")
        let rows = MicrophoneChoices.rows(sources: sources, stored: stored)
        rebuildingMicrophones = true
        defer { rebuildingMicrophones = false }
        if rows != microphoneRows {
            microphoneRows = rows
            var pointers: [UnsafeMutablePointer<CChar>?] = rows.map { strdup($0.label) }
            pointers.append(nil)
            let model = pointers.withUnsafeBufferPointer { buffer in
                made(buffer.baseAddress).withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                    gtk_string_list_new($0)
                }
            }
            for pointer in pointers { free(pointer) }
            adw_combo_row_set_model(cast(microphone), model)
        }
        adw_combo_row_set_selected(cast(microphone), guint(MicrophoneChoices.index(of: stored, in: rows)))
    }

    private func microphoneChosen() {
        guard !rebuildingMicrophones else { return }
        let index = Int(adw_combo_row_get_selected(cast(microphone)))
        guard microphoneRows.indices.contains(index) else { return }
        app.settings.set("dictation-device", string: microphoneRows[index].device)
    }

    // MARK: Test

    private func toggleTest() {
        if let test, test.run.isRunning {
            test.stop()
            return
        }
        var arguments = MicrophoneChoices.helperArguments(device: app.settings.string("dictation-device"))
        // Tests: `INKLING_DICTATE_ARGS="--audio-file x.wav"`, as for the engine.
        if let extra = getenv("INKLING_DICTATE_ARGS").map({ String(cString: $0) }) {
            arguments += extra.split(separator: " ").map(String.init)
        }
        let started = HelperTest(arguments: arguments) { [weak self] run in self?.show(run) }
        test = started
        show(started.run)
    }

    private func show(_ run: DictationTestRun) {
        gtk_level_bar_set_value(cast(meter), run.level)
        adw_action_row_set_subtitle(cast(testStatus), run.status)
        gtk_button_set_label(cast(testButton), run.isRunning ? tr("Stop") : tr("Test"))
    }
}

/// One run of the `inkling-dictate` helper for the test: JSON lines over pipes, read on the main
/// loop without blocking it. What it heard is shown only, never stored or logged.
final class HelperTest {
    private(set) var run = DictationTestRun()
    private var pid: pid_t = 0
    private var toHelper: Int32 = -1
    private var fromHelper: Int32 = -1
    private var pending: [UInt8] = []
    private var stopSent = false
    private let deadline: Int64
    private let update: (DictationTestRun) -> Void

    /// `$INKLING_DICTATE`, else `inkling-dictate` beside this program.
    static var helperPath: String {
        if let override = getenv("INKLING_DICTATE").map({ String(cString: $0) }), !override.isEmpty { return override }
        let executable = PackLocator.currentExecutablePath()
        guard let slash = executable.lastIndex(of: "/") else { return "inkling-dictate" }
        return executable[..<slash] + "/inkling-dictate"
    }

    init(arguments: [String], update: @escaping (DictationTestRun) -> Void) {
        self.update = update
        // Tests on a loaded machine: INKLING_DICTATION_TEST_SECONDS lets a slow recogniser finish a file.
        let seconds =
            getenv("INKLING_DICTATION_TEST_SECONDS").flatMap { Int64(String(cString: $0)) }
            ?? Int64(DictationTestRun.listenSeconds)
        deadline = ProductClock.monotonic.now() + seconds * 1000
        guard spawn([Self.helperPath] + arguments) else {
            run.helperEnded(tr("cannot start {program}", ["program": Self.helperPath]))
            return
        }
        send(DictationTestRun.startLine)
        every(milliseconds: 50) { [weak self] in self?.poll() ?? false }
    }

    deinit { finish() }

    /// Asks the helper to stop listening: it finalizes what it heard, then says `stopped`.
    func stop() {
        guard !stopSent else { return }
        stopSent = true
        send(DictationTestRun.stopLine)
    }

    private func spawn(_ argv: [String]) -> Bool {
        signal(SIGPIPE, SIG_IGN)
        var input: [Int32] = [0, 0]
        var output: [Int32] = [0, 0]
        guard pipe(&input) == 0 else { return false }
        guard pipe(&output) == 0 else {
            close(input[0])
            close(input[1])
            return false
        }
        // Not inherited by the helper (its ends are dup2'ed onto 0 and 1) or by later children.
        for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        let cStrings = argv.map { strdup($0) } + [nil]
        defer { for pointer in cStrings { free(pointer) } }
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cStrings, environ)
        posix_spawn_file_actions_destroy(&actions)
        close(input[0])
        close(output[1])
        guard spawned == 0 else {
            close(input[1])
            close(output[0])
            pid = 0
            return false
        }
        toHelper = input[1]
        fromHelper = output[0]
        _ = fcntl(fromHelper, F_SETFL, fcntl(fromHelper, F_GETFL) | O_NONBLOCK)
        return true
    }

    private func send(_ line: String) {
        guard toHelper >= 0 else { return }
        var copy = line
        copy.withUTF8 { buffer in _ = write(toHelper, buffer.baseAddress, buffer.count) }
    }

    /// Reads what the helper wrote; false (the timer ends) once the run is over.
    private func poll() -> Bool {
        if !stopSent && ProductClock.monotonic.now() >= deadline { stop() }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while run.isRunning {
            let count = read(fromHelper, &buffer, buffer.count)
            if count > 0 {
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    run.receive(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EINTR) { break }
            run.helperEnded()
        }
        update(run)
        if run.isRunning { return true }
        finish()
        return false
    }

    /// Closes the pipes (the helper exits on end of input) and reaps it.
    private func finish() {
        if toHelper >= 0 { close(toHelper) }
        if fromHelper >= 0 { close(fromHelper) }
        toHelper = -1
        fromHelper = -1
        if pid > 0 {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == 0 {
                kill(pid, SIGTERM)
                waitpid(pid, &status, 0)
            }
            pid = 0
        }
    }
}
