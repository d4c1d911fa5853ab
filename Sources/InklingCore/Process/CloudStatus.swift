/// The outcome of the cloud helper's last check, as a small file in the session's runtime folder
/// (`$XDG_RUNTIME_DIR/inkling/cloud-status`) that `inkling-cloud` rewrites and the settings app's
/// Cloud page shows.
///
/// The file holds one line, `STATE UNIX-SECONDS [HTTP-CLASS]` (e.g. `failing 1764650000 5xx`):
/// never a sentence, an endpoint or a key. Why a file: the helper is a child of the engine and
/// the app cannot ask it (see `Heartbeat`); the runtime folder is private to this login session.
public enum CloudStatus {
    /// What the last check came to.
    public enum State: String, CaseIterable, Sendable {
        /// The endpoint answered with a usable verdict.
        case working
        /// An Inkling Server refused this device's token (`inkling account login` again).
        case signInRequired = "sign-in-required"
        /// No answer: no network, refused connection, or a timeout.
        case unreachable
        /// The endpoint answered with an HTTP error or an answer that could not be read.
        case failing
        /// An Inkling Server asked the helper to wait before the next check (429).
        case rateLimited = "rate-limited"
    }

    /// One line of the file.
    public struct Record: Equatable, Sendable {
        public var state: State
        /// When the helper wrote it (seconds since the epoch).
        public var time: Int64
        /// The HTTP status class (1 to 5 for `1xx` to `5xx`), when there was an HTTP answer.
        public var httpClass: Int?

        public init(state: State, time: Int64, httpClass: Int? = nil) {
            self.state = state
            self.time = time
            self.httpClass = httpClass.flatMap { (1...5).contains($0) ? $0 : nil }
        }
    }

    /// A record older than this says nothing about the cloud check now: "no recent check".
    public static let staleAfter: Int64 = 24 * 60 * 60
    /// The helper rewrites an unchanged state this often, so a working check never looks stale.
    public static let rewriteAfter: Int64 = 60 * 60
    /// A record this far in the future is tolerated (clocks of a session may be adjusted); beyond,
    /// the file is not believed.
    public static let futureTolerance: Int64 = 5 * 60
    /// The most of the file a reader looks at (a record is one short line).
    public static let maximumBytes = 64

    /// The status file, or nil when the session has no absolute runtime folder.
    public static func path(runtimeDirectory: String?) -> String? {
        guard let folder = runtimeDirectory, folder.hasPrefix("/") else { return nil }
        return folder + "/inkling/cloud-status"
    }

    /// The file's text for a record.
    public static func contents(_ record: Record) -> String {
        var line = record.state.rawValue + " \(record.time)"
        if let httpClass = record.httpClass { line += " \(httpClass)xx" }
        return line + "\n"
    }

    /// The record in a file's text, or nil for anything else (empty, garbage, an unknown state,
    /// a time that is not a positive number, more than one line's worth).
    public static func record(in text: String) -> Record? {
        guard text.utf8.count <= maximumBytes else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let line = lines.first, lines.dropFirst().allSatisfy(\.isEmpty) else { return nil }
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3, let state = State(rawValue: String(fields[0])),
            fields[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let time = Int64(fields[1]), time > 0
        else { return nil }
        var httpClass: Int?
        if fields.count == 3 {
            let field = Array(fields[2].utf8)
            guard field.count == 3, field[1] == 0x78, field[2] == 0x78, (0x31...0x35).contains(field[0]) else {
                return nil
            }
            httpClass = Int(field[0] - 0x30)
        }
        return Record(state: state, time: time, httpClass: httpClass)
    }

    /// Whether the helper writes `next` given the record it wrote last: when the state (or the
    /// HTTP class) changed, and now and then while it stays the same (see `rewriteAfter`).
    public static func needsWrite(previous: Record?, next: Record) -> Bool {
        guard let previous else { return true }
        if previous.state != next.state || previous.httpClass != next.httpClass { return true }
        // A clock set back: write, so the file's time is not ahead of the check's.
        return next.time < previous.time || next.time - previous.time >= rewriteAfter
    }

    /// What the Cloud page says about the last check.
    public enum Report: Equatable, Sendable {
        case noRecentCheck
        case state(State, httpClass: Int?)

        public var sentence: String {
            switch self {
            case .noRecentCheck:
                return tr("No recent check. Checks run when you finish a sentence with the cloud check on.")
            case .state(.working, _):
                return tr("Working: the last check was answered.")
            case .state(.signInRequired, _):
                return tr("Needs sign-in: the server refused this device's token. Sign in again below.")
            case .state(.unreachable, _):
                return tr(
                    "Unreachable: the last check got no answer (no network, or the endpoint did not answer in time).")
            case .state(.failing, let httpClass?):
                return tr(
                    "Not working: the endpoint answered the last check with an error (HTTP {class}).",
                    ["class": "\(httpClass)xx"])
            case .state(.failing, nil):
                return tr("Not working: the endpoint's answer to the last check could not be read.")
            case .state(.rateLimited, _):
                return tr("Rate limited: the server asked Inkling to wait before the next check.")
            }
        }
    }

    /// The report for a file's text (nil: there is no file) at `now` (seconds since the epoch).
    public static func report(text: String?, now: Int64) -> Report {
        guard let text, let record = record(in: text) else { return .noRecentCheck }
        // Negative: written in the future (a clock set back). Any clock value, no overflow.
        let (age, overflow) = now.subtractingReportingOverflow(record.time)
        if overflow || age < -futureTolerance || age > staleAfter { return .noRecentCheck }
        return .state(record.state, httpClass: record.httpClass)
    }
}
