/// Where the engine and the cloud helper write their log lines.
///
/// ibus-daemon starts its engines with stderr on /dev/null (unless it runs with `--verbose`), so
/// lines written there are lost: then they go to the systemd journal. A person who runs a binary
/// from a terminal, or redirects its stderr to a file or a pipe, reads them there. A stderr that
/// systemd connected to the journal (`JOURNAL_STREAM`) gets structured entries instead of plain
/// lines. Whatever the destination, a log line never holds typed text.
public enum LogDestination: Equatable, Sendable {
    /// Structured entries to the journal (stderr when no journal answers).
    case journal
    /// Plain lines on standard error.
    case standardError

    /// What standard error is connected to.
    public enum StandardError: Equatable, Sendable {
        /// A terminal.
        case terminal
        /// The journal's stream (systemd set `JOURNAL_STREAM` to this file's device and inode).
        case journalStream
        /// /dev/null, or closed: what is written there is lost.
        case discarded
        /// A regular file, a pipe or a socket that is not the journal's.
        case fileOrPipe
    }

    /// The destination for a process whose stderr is `standardError`.
    public static func choose(standardError: StandardError) -> LogDestination {
        switch standardError {
        case .journalStream, .discarded: .journal
        case .terminal, .fileOrPipe: .standardError
        }
    }
}
