#if canImport(Glibc)
    import Glibc
#endif

/// Reading a password: from the terminal without echo, or the first line of standard input when
/// it is not a terminal (scripts, tests). The bytes are wiped after use by the caller's
/// `withSecret` closure returning.
public enum SecretInput {
    /// Longest secret read, in bytes.
    public static let maximumBytes = 4096

    /// The terminal's settings while echo is off, for the SIGINT/SIGTERM handler.
    nonisolated(unsafe) private static var savedTerminal = termios()
    nonisolated(unsafe) private static var echoOff = false

    /// Reads one secret line (`prompt` on standard error when standard input is a terminal) and
    /// hands it to `body`; nil when nothing could be read (end of input). The line's bytes are
    /// zeroed afterwards.
    public static func withSecret<T>(prompt: String, _ body: (String) -> T) -> T? {
        let terminal = isatty(0) != 0
        if terminal {
            // Echo off first, then the prompt: TCSAFLUSH discards input typed before it, so a
            // password typed right after the prompt appears must not be typed before the switch.
            if tcgetattr(0, &savedTerminal) == 0 {
                var quiet = savedTerminal
                quiet.c_lflag &= ~tcflag_t(ECHO)
                quiet.c_lflag |= tcflag_t(ECHONL)
                echoOff = true
                signal(SIGINT, restoreAndExit)
                signal(SIGTERM, restoreAndExit)
                _ = tcsetattr(0, TCSAFLUSH, &quiet)
            }
            Terminal.error(prompt)
        }
        var line = [UInt8]()
        var byte: UInt8 = 0
        var sawAnything = false
        while line.count < maximumBytes {
            let count = read(0, &byte, 1)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            sawAnything = true
            if byte == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        if terminal, echoOff {
            _ = tcsetattr(0, TCSAFLUSH, &savedTerminal)
            echoOff = false
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
        defer { for index in line.indices { line[index] = 0 } }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        guard sawAnything else { return nil }
        return body(String(decoding: line, as: UTF8.self))
    }

    private static let restoreAndExit: @convention(c) (Int32) -> Void = { signalNumber in
        if SecretInput.echoOff { _ = tcsetattr(0, TCSAFLUSH, &SecretInput.savedTerminal) }
        _exit(128 + signalNumber)
    }
}
