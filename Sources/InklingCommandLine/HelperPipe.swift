import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The standard output of a helper process that the engine reads line by line (`inkling-cloud`,
/// `inkling-dictate`): whole lines, one writer at a time; the process ends when the engine is gone.
public final class LineOutput: Sendable {
    private let lock = Mutex<Int32>(1)

    /// Lines to standard output.
    public init() {}

    /// Writes one line (with its newline; nothing when empty); ends the process when the reader
    /// is gone, since a helper without its engine has nothing left to do.
    public func send(line: String) {
        guard !line.isEmpty else { return }
        lock.withLock { descriptor in
            if !Terminal.writeAll(Array(line.utf8), to: descriptor) { _exit(0) }
        }
    }

    /// Ends the process without cutting a line in half (unless a write is stuck).
    public func exit() -> Never {
        lock.withLockIfAvailable { _ in _exit(0) }
        _exit(0)
    }
}

extension LineSplitter {
    /// Reads standard input to its end, split into lines of at most `limit` bytes: `handle` gets
    /// each line (without its newline) or the length of an oversized one, and returns false to
    /// stop. Returns at the end of the input, on a read error, or when `handle` says stop.
    public static func readStandardInput(limit: Int, bufferSize: Int, _ handle: (Item) -> Bool) {
        var splitter = LineSplitter(limit: limit)
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return }
            for item in splitter.feed(buffer[0..<count]) {
                if !handle(item) { return }
            }
        }
    }
}
