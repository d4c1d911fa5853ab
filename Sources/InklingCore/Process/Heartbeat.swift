/// The engine's sign of life: a small file in the session's runtime folder
/// (`$XDG_RUNTIME_DIR/inkling/engine-heartbeat`) holding the engine's process id, rewritten
/// every `interval` seconds.
///
/// Why a file: the runtime folder belongs to this login session only (tmpfs, removed at logout,
/// mode 0700), so a heartbeat there means "running in this session"; no D-Bus name (the engine
/// already owns IBus's), no GSettings write every few seconds (dconf writes to disk).
public enum Heartbeat {
    /// Seconds between two writes by the engine.
    public static let interval = 20
    /// A heartbeat older than this is stale (three intervals: a busy machine may be late once).
    public static let staleAfter = 3 * interval

    /// The heartbeat file, or nil when the session has no runtime folder.
    public static func path(runtimeDirectory: String?) -> String? {
        guard let folder = runtimeDirectory, folder.hasPrefix("/") else { return nil }
        return folder + "/inkling/engine-heartbeat"
    }

    /// The contents the engine writes.
    public static func contents(processID: Int32) -> String { "\(processID)\n" }

    /// The process id in a heartbeat file's contents, if it holds one.
    public static func processID(in contents: String) -> Int32? {
        let line = contents.split(separator: "\n").first.map(String.init) ?? ""
        guard let pid = Int32(line), pid > 0 else { return nil }
        return pid
    }

    /// What the About page says.
    public enum Status: Equatable, Sendable {
        case running
        case notRunning
        /// The file is there but its process is gone (it crashed, or the session's IBus stopped).
        case stopped
        /// The process exists but has not written for longer than `staleAfter`: its main loop is stuck.
        case notResponding

        public var sentence: String {
            switch self {
            case .running: return tr("Inkling is running in this session.")
            case .notRunning:
                return tr(
                    "Inkling is not running in this session. Add it under Settings → Keyboard → Input Sources, or run `ibus restart`."
                )
            case .stopped:
                return tr(
                    "Inkling was running in this session but has stopped. IBus starts it again when you switch to Inkling."
                )
            case .notResponding:
                return tr("Inkling is running in this session but not responding. Restart it with `ibus restart`.")
            }
        }
    }

    /// The status from the file's age and whether its process still runs.
    /// - Parameters:
    ///   - modified: when the file was last written (seconds since the epoch), nil if there is none.
    ///   - now: the current time in the same unit.
    ///   - processRuns: whether the process named in the file exists.
    public static func status(modified: Int64?, now: Int64, processRuns: Bool) -> Status {
        guard let modified else { return .notRunning }
        guard processRuns else { return .stopped }
        // A clock set back makes `now - modified` negative: the file is not stale for that.
        return now - modified > Int64(staleAfter) ? .notResponding : .running
    }
}
