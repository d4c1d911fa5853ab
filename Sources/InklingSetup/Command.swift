import CGtk
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the `inkling` command (the one beside this program, else the one on PATH) without
/// blocking the window: the app reuses the command's pack and learned-word operations.
final class InklingCommand {
    /// The executable: `INKLING_COMMAND` (tests), else `inkling` beside `inkling-setup`, else PATH.
    static var path: String {
        if let override = getenv("INKLING_COMMAND").map({ String(cString: $0) }), !override.isEmpty { return override }
        let executable = PackLocator.currentExecutablePath()
        if let slash = executable.lastIndex(of: "/") {
            let sibling = executable[..<slash] + "/inkling"
            if access(String(sibling), X_OK) == 0 { return String(sibling) }
        }
        return "inkling"
    }

    let process: OpaquePointer
    private var completion: ((Int32, String, String) -> Void)?

    /// The child's process id (for the partial download's name), if it is running.
    var processID: Int32? {
        g_subprocess_get_identifier(process).flatMap { Int32(String(cString: $0)) }
    }

    private init(process: OpaquePointer) { self.process = process }

    /// Starts `inkling ARGUMENTS` (or another `executable`, looked up on PATH: `pactl`);
    /// `completion(exit status, stdout, stderr)` runs on the main loop.
    /// Returns nil (after calling `completion` with status 127) when it cannot start.
    @discardableResult
    static func run(
        _ arguments: [String], executable: String? = nil, input: String? = nil,
        completion: @escaping (Int32, String, String) -> Void
    ) -> InklingCommand? {
        var argv: [UnsafeMutablePointer<CChar>?] = ([executable ?? path] + arguments).map { strdup($0) }
        argv.append(nil)
        defer { for pointer in argv { free(pointer) } }
        var error: UnsafeMutablePointer<GError>?
        var flags = G_SUBPROCESS_FLAGS_STDOUT_PIPE.rawValue | G_SUBPROCESS_FLAGS_STDERR_PIPE.rawValue
        if input != nil { flags |= G_SUBPROCESS_FLAGS_STDIN_PIPE.rawValue }
        let launcher = g_subprocess_launcher_new(GSubprocessFlags(rawValue: flags))
        defer { g_object_unref(raw(launcher)) }
        // The app reads the command's output (`packs list`, `account status`, its error
        // sentences) in the English it is written in; the CLI translates its messages, so its
        // messages are asked for untranslated whatever the user's language. What the user sees
        // is the app's own translated sentence.
        g_subprocess_launcher_setenv(launcher, "LANGUAGE", "C", 1)
        let started = argv.withUnsafeBufferPointer { buffer in
            made(buffer.baseAddress).withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                g_subprocess_launcher_spawnv(launcher, $0, &error)
            }
        }
        guard let started else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "cannot start \(path)"
            g_clear_error(&error)
            completion(127, "", message)
            return nil
        }
        let command = InklingCommand(process: started)
        command.completion = completion
        let retained = Unmanaged.passRetained(command).toOpaque()
        typealias Ready = @convention(c) (UnsafeMutablePointer<GObject>?, OpaquePointer?, gpointer?) -> Void
        let ready: Ready = { _, result, data in
            guard let data else { return }  // always the command retained above
            let command = Unmanaged<InklingCommand>.fromOpaque(data).takeRetainedValue()
            var out: UnsafeMutablePointer<CChar>?
            var err: UnsafeMutablePointer<CChar>?
            var error: UnsafeMutablePointer<GError>?
            _ = g_subprocess_communicate_utf8_finish(command.process, result, &out, &err, &error)
            g_clear_error(&error)
            let stdout = out.map { String(cString: $0) } ?? ""
            let stderr = err.map { String(cString: $0) } ?? ""
            g_free(out)
            g_free(err)
            let status: Int32 =
                g_subprocess_get_if_exited(command.process) != 0
                ? g_subprocess_get_exit_status(command.process) : 128 + g_subprocess_get_term_sig(command.process)
            command.completion?(status, stdout, stderr)
            command.completion = nil
            g_object_unref(raw(cast(command.process) as UnsafeMutablePointer<GObject>))
        }
        g_subprocess_communicate_utf8_async(started, input, nil, ready, retained)
        return command
    }

    /// Runs the command and waits (short commands whose answer the caller needs at once).
    static func runAndWait(_ arguments: [String], input: String? = nil) -> (
        status: Int32, stdout: String, stderr: String
    ) {
        var result: (Int32, String, String)?
        run(arguments, input: input) { result = ($0, $1, $2) }
        while true {
            if let result { return result }
            g_main_context_iteration(nil, 1)
        }
    }

    /// Asks the command to stop (SIGTERM: the CLI removes its partial download, then exits).
    func cancel() { g_subprocess_send_signal(process, SIGTERM) }
}
