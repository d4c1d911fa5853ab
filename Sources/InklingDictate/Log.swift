import InklingCommandLine
import InklingLog

/// Diagnostics: to the journal when stderr is discarded (the engine starts the helper so), else
/// lines on stderr (see `ProcessLog`). Privacy by construction: messages are static strings and
/// the only values are integers, so nothing heard or recognised can reach a log.
enum Log {
    static func note(_ message: StaticString, _ fields: (StaticString, Int)...) {
        var line = "\(message)"
        for (name, value) in fields { line += " \(name)=\(value)" }
        ProcessLog.write(line)
    }

    /// Command-line problems: the messages are the helper's own, never input.
    static func usage(_ problem: UsageError) {
        ProcessLog.write(problem.explanation)
    }
}
