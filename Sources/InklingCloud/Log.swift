import Glibc
import InklingCommandLine
import InklingLog

/// Diagnostics: to the journal when stderr is discarded (the engine starts the helper so), else
/// lines on stderr (see `ProcessLog`). Privacy by construction: messages are static strings and the only
/// values are integers (ids, sizes, status codes, durations), so nothing typed, no flag and no
/// key can reach a log. Configuration problems may name a file path, never file contents.
enum Log {
    static func note(_ message: StaticString, detail: StaticString = "", _ fields: (StaticString, Int)...) {
        var line = "\(message)"
        if detail.utf8CodeUnitCount > 0 { line += " (\(detail))" }
        for (name, value) in fields { line += " \(name)=\(value)" }
        emit(line)
    }

    /// A configuration problem about a file: the path is the user's configuration, not text.
    static func config(_ message: StaticString, detail: StaticString = "", path: String) {
        let extra = detail.utf8CodeUnitCount > 0 ? " (\(detail))" : ""
        emit(
            "\(message)\(extra): \(path.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(String.init).joined())"
        )
    }

    /// Command-line problems: the messages are the helper's own, never input.
    static func usage(_ problem: UsageError) {
        emit(problem.explanation)
    }

    private static func emit(_ line: String) {
        ProcessLog.write(line)
    }
}
