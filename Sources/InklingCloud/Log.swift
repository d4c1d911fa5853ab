import Glibc

/// Diagnostics on stderr. Privacy by construction: messages are static strings and the only
/// values are integers (ids, sizes, status codes, durations), so nothing typed, no flag and no
/// key can reach a log. Configuration problems may name a file path, never file contents.
enum Log {
    static func note(_ message: StaticString, detail: StaticString = "", _ fields: (StaticString, Int)...) {
        var line = "inkling-cloud: \(message)"
        if detail.utf8CodeUnitCount > 0 { line += " (\(detail))" }
        for (name, value) in fields { line += " \(name)=\(value)" }
        emit(line)
    }

    /// A configuration problem about a file: the path is the user's configuration, not text.
    static func config(_ message: StaticString, detail: StaticString = "", path: String) {
        let extra = detail.utf8CodeUnitCount > 0 ? " (\(detail))" : ""
        emit("inkling-cloud: \(message)\(extra): \(path.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(String.init).joined())")
    }

    /// Command-line problems: the messages are the helper's own, never input.
    static func usage(_ problem: String) {
        emit("inkling-cloud: \(problem)\n\(Options.usage)")
    }

    private static func emit(_ line: String) {
        var bytes = Array((line + "\n").utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
