import CGio
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The log of the engine and of the cloud helper, through GLib's structured logging.
///
/// ibus-daemon starts its engines with stderr on /dev/null, so plain lines there were lost: with
/// such a stderr (see `LogDestination`) every entry goes to the journal, with `MESSAGE`,
/// `PRIORITY` and `SYSLOG_IDENTIFIER`; from a terminal, a file or a pipe it stays a plain line on
/// stderr (`identifier: message`). GLib's and libibus's own messages take the same way.
/// Callers pass only fixed text and numbers: never anything typed.
public enum ProcessLog {
    /// syslog priorities (the journal's `PRIORITY`).
    public enum Priority: Int {
        case warning = 4
        case notice = 5
        case info = 6
    }

    /// Set once by `setUp`, before any other thread starts; read-only afterwards.
    nonisolated(unsafe) private static var identifier = "inkling"
    nonisolated(unsafe) private static var destination = LogDestination.standardError

    /// Chooses the destination from what stderr is and installs the writer (first thing in main).
    public static func setUp(identifier: String) {
        self.identifier = identifier
        destination = LogDestination.choose(standardError: standardErrorKind())
        g_log_set_writer_func(writer, nil, nil)
    }

    /// One entry (fixed text and numbers only).
    public static func write(_ message: String, priority: Priority = .notice) {
        "MESSAGE".withCString { messageKey in
            message.withCString { messageValue in
                "PRIORITY".withCString { priorityKey in
                    String(priority.rawValue).withCString { priorityValue in
                        "SYSLOG_IDENTIFIER".withCString { identifierKey in
                            identifier.withCString { identifierValue in
                                let fields = [
                                    GLogField(key: messageKey, value: messageValue, length: -1),
                                    GLogField(key: priorityKey, value: priorityValue, length: -1),
                                    GLogField(key: identifierKey, value: identifierValue, length: -1),
                                ]
                                // MESSAGE level: never fatal, never filtered like debug/info.
                                fields.withUnsafeBufferPointer { buffer in
                                    g_log_structured_array(G_LOG_LEVEL_MESSAGE, buffer.baseAddress, gsize(buffer.count))
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// What file descriptor 2 is connected to.
    static func standardErrorKind() -> LogDestination.StandardError {
        var status = stat()
        guard fstat(2, &status) == 0 else { return .discarded }
        if g_log_writer_is_journald(2) != 0 { return .journalStream }
        if isatty(2) != 0 { return .terminal }
        var null = stat()
        if status.st_mode & S_IFMT == S_IFCHR, stat("/dev/null", &null) == 0, status.st_rdev == null.st_rdev {
            return .discarded
        }
        return .fileOrPipe
    }

    /// GLib's writer for this process (called on any thread).
    private static let writer: GLogWriterFunc = { level, fields, count, data in
        guard let fields else { return G_LOG_WRITER_UNHANDLED }
        let entry = ProcessLog.read(fields, count)
        // GLib's and libibus's debug and info messages only with G_MESSAGES_DEBUG, as GLib's own
        // writer does; ours are MESSAGE level and always kept.
        if !entry.ours, g_log_writer_default_would_drop(level, entry.domain) != 0 { return G_LOG_WRITER_HANDLED }
        if ProcessLog.destination == .journal,
            g_log_writer_journald(level, fields, count, data) == G_LOG_WRITER_HANDLED
        {
            return G_LOG_WRITER_HANDLED
        }
        // No journal answered, or stderr is where a person looks: plain lines for our entries.
        guard entry.ours, let message = entry.message else {
            return g_log_writer_standard_streams(level, fields, count, data)
        }
        var bytes = Array((ProcessLog.identifier + ": " + message + "\n").utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(2, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                if written <= 0 { break }
                offset += written
            }
        }
        return G_LOG_WRITER_HANDLED
    }

    /// The fields that matter here: MESSAGE, GLIB_DOMAIN, and whether `write` made the entry
    /// (it carries our SYSLOG_IDENTIFIER).
    private static func read(_ fields: UnsafePointer<GLogField>, _ count: gsize) -> (
        message: String?, domain: String?, ours: Bool
    ) {
        var message: String?
        var domain: String?
        var ours = false
        for index in 0..<Int(count) {
            let field = fields[index]
            guard let key = field.key, let value = field.value else { continue }
            let bytes = value.assumingMemoryBound(to: UInt8.self)
            let text =
                field.length < 0
                ? String(cString: bytes)
                : String(decoding: UnsafeBufferPointer(start: bytes, count: Int(field.length)), as: UTF8.self)
            switch String(cString: key) {
            case "MESSAGE": message = text
            case "GLIB_DOMAIN": domain = text
            case "SYSLOG_IDENTIFIER": ours = text == identifier
            default: break
            }
        }
        return (message, domain, ours)
    }
}
