import CGio
import FoundationEssentials
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// `inkling dictation enable|disable|test`: the dictation switch (GSettings `dictation`) and a
/// microphone check that runs the `inkling-dictate` helper and prints what it recognised. The
/// recognised text goes to this terminal only (the user asked for it); nothing is stored.
enum DictationCommand {
    static func run(_ arguments: Arguments) {
        switch arguments.positional.first {
        case "enable":
            let schema = ConfigCommand.Schema.open()
            schema.requireKey("dictation")
            schema.set("dictation", text: "true")
            print(
                tr(
                    "dictation is on; press {keys} in a text field to start and stop listening",
                    ["keys": schema.display("dictation-key")]))
            if !FileManager.default.fileExists(atPath: helperPath()) {
                warn(
                    "inkling: "
                        + tr("note: the helper {path} is missing; dictation will not start", ["path": helperPath()]))
            }
        case "disable":
            let schema = ConfigCommand.Schema.open()
            schema.requireKey("dictation")
            schema.set("dictation", text: "false")
            print(tr("dictation is off"))
        case "words":
            let pack = openPack(arguments)
            let ids = (0..<pack.wordCount).sorted { pack.logPrior($0) > pack.logPrior($1) }
            for id in ids.prefix(arguments.int("-n") ?? pack.wordCount) { print(pack.key(id)) }
        case "test":
            test(
                audioFile: arguments.options["--audio-file"], device: arguments.options["--device"] ?? storedDevice(),
                seconds: arguments.int("--seconds") ?? 10)
        default:
            arguments.usageError(tr("dictation needs enable, disable, test or words"))
        }
    }

    /// GSettings `dictation-device` (the microphone chosen in Inkling Settings); empty when not
    /// set or when the schema is not installed (the test needs no settings).
    static func storedDevice() -> String {
        guard let source = g_settings_schema_source_get_default(),
            let schema = g_settings_schema_source_lookup(source, EngineSettingsSchema.id, 1)
        else { return "" }
        defer { g_settings_schema_unref(schema) }
        guard g_settings_schema_has_key(schema, "dictation-device") != 0,
            let settings = g_settings_new_full(schema, nil, nil)
        else { return "" }
        defer { g_object_unref(settings) }
        guard let value = g_settings_get_string(settings, "dictation-device") else { return "" }
        defer { g_free(value) }
        return String(cString: value)
    }

    /// `$INKLING_DICTATE`, else `inkling-dictate` next to this executable.
    static func helperPath() -> String {
        if let value = getenv("INKLING_DICTATE"), value.pointee != 0 { return String(cString: value) }
        let executable = PackLocator.currentExecutablePath()
        return executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            + "/inkling-dictate"
    }

    /// Listens once: a level meter on standard error while listening, each finalized utterance
    /// on standard output; ends after `seconds`, at the end of an audio file, or on an error
    /// (exit status 1).
    static func test(audioFile: String?, device: String, seconds: Int) {
        var arguments = [helperPath()]
        if !device.isEmpty { arguments += ["--device", device] }
        if let audioFile { arguments += ["--audio-file", audioFile] }
        var toHelper: [Int32] = [0, 0]
        var fromHelper: [Int32] = [0, 0]
        guard pipe(&toHelper) == 0, pipe(&fromHelper) == 0 else { fail(tr("cannot create pipes")) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, toHelper[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromHelper[1], 1)
        for fd in toHelper + fromHelper { posix_spawn_file_actions_addclose(&actions, fd) }
        var pid: pid_t = 0
        let cStrings = arguments.map { strdup($0) } + [nil]
        defer { for pointer in cStrings { free(pointer) } }
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, cStrings, environ)
        posix_spawn_file_actions_destroy(&actions)
        close(toHelper[0])
        close(fromHelper[1])
        guard spawned == 0 else {
            fail(
                tr(
                    "cannot run {program}: {problem}",
                    ["program": arguments[0], "problem": String(cString: strerror(spawned))]))
        }
        signal(SIGPIPE, SIG_IGN)
        send(DictationRequest(type: "start", session: 1).line, to: toHelper[1])
        warn(
            audioFile.map { tr("reading {path}…", ["path": $0]) }
                ?? tr("say something… ({seconds} s)", ["seconds": "\(seconds)"]))
        let deadline = ProductClock.monotonic.now() + Int64(seconds) * 1000
        var stopSent = false
        var pending: [UInt8] = []
        var heardAnything = false
        var failure: String?
        var buffer = [UInt8](repeating: 0, count: 4096)
        reading: while true {
            let now = ProductClock.monotonic.now()
            if now >= deadline && !stopSent {
                send(DictationRequest(type: "stop", session: 1).line, to: toHelper[1])
                stopSent = true
            }
            var poller = pollfd(fd: fromHelper[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 200)
            if ready < 0, errno == EINTR { continue }
            if ready <= 0 { continue }
            let count = read(fromHelper[0], &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                failure = "the helper exited"
                break
            }
            pending += buffer[0..<count]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                guard let event = DictationEvent.parse(line) else { continue }
                switch event.type {
                case "level":
                    let bars = Int(((event.level ?? 0) * 30).rounded())
                    warn("\u{1B}[1A\u{1B}[2K" + tr("level") + " " + String(repeating: "█", count: bars))
                case "final":
                    heardAnything = true
                    print(tr("heard: {text}", ["text": event.text ?? ""]))
                case "error":
                    failure = event.message ?? "error"
                    break reading
                case "stopped":
                    break reading
                default:
                    break
                }
            }
        }
        close(toHelper[1])
        close(fromHelper[0])
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        if let failure { fail(tr("dictation test failed: {problem}", ["problem": failure])) }
        if !heardAnything { print(tr("heard nothing")) }
    }

    private static func send(_ line: String, to fd: Int32) {
        var copy = line
        copy.withUTF8 { buffer in _ = write(fd, buffer.baseAddress, buffer.count) }
    }
}
