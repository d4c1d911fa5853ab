import CIBus
import InklingLog

#if canImport(Glibc)
    import Glibc
#endif

/// Writes one log entry: to the journal when ibus-daemon discarded stderr, else a line on
/// stderr (see `ProcessLog`). Only numbers and fixed messages: never typed text.
func log(_ message: String, priority: ProcessLog.Priority = .notice) {
    ProcessLog.write(message, priority: priority)
}

/// `INKLING_DEBUG_MEMORY=N`: every N key presses, logs VmRSS and VmHWM (from /proc/self/status),
/// the C heap (bytes in use, bytes the allocator holds),
/// the mapped size of the pack, live engine objects, and how long the engine itself spent
/// answering keys and computing suggestions since the last line (microseconds). Numbers only.
@MainActor
final class MemoryDiagnostics {
    private let interval: Int
    private let packBytes: Int
    private var presses = 0
    private var keyMicros: [Int] = []
    private var suggestMicros: [Int] = []
    /// Key answers since the last suggestions, and each key's answers plus its suggestions.
    private var pendingKeyMicros = 0
    private var workMicros: [Int] = []
    /// The same in CPU time of the main thread (not inflated by other processes on the machine).
    private var pendingKeyCPUMicros = 0
    private var workCPUMicros: [Int] = []
    /// The suggestions' CPU time split: the table's prediction, and sending it (the effects).
    private var predictCPUMicros: [Int] = []
    private var sendCPUMicros: [Int] = []
    /// Work after the table went out (the finished word's check), wall and CPU.
    private var afterMicros: [Int] = []
    private var afterCPUMicros: [Int] = []

    /// When a piece of engine work began, on the wall clock and in the thread's CPU time.
    struct Stamp {
        var wall: Int
        var cpu: Int
    }

    static func stamp() -> Stamp { Stamp(wall: now(), cpu: threadCPUTime()) }

    /// CPU time of the calling thread in microseconds.
    static func threadCPUTime() -> Int {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return spec.tv_sec * 1_000_000 + spec.tv_nsec / 1000
    }

    /// A monotonic clock in microseconds.
    static func now() -> Int {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return spec.tv_sec * 1_000_000 + spec.tv_nsec / 1000
    }

    func recordKey(since start: Stamp) {
        let spent = Self.now() - start.wall
        keyMicros.append(spent)
        pendingKeyMicros += spent
        pendingKeyCPUMicros += Self.threadCPUTime() - start.cpu
    }

    /// Start of the engine: opening the English pack, everything up to the main loop (wall and
    /// CPU), logged with the first suggestions' work, so start to first table is their sum.
    var packOpenMicros = 0
    private var readyMicros = 0
    private var readyCPUMicros = 0
    private var startupLogged = false

    func startupReady(since start: Stamp) {
        readyMicros = Self.now() - start.wall
        readyCPUMicros = Self.threadCPUTime() - start.cpu
    }

    /// `sendStart`: the thread's CPU time when the table's effects began to go out.
    func recordSuggestions(since start: Stamp, sendingSince sendStart: Int) {
        let spent = Self.now() - start.wall
        let cpuNow = Self.threadCPUTime()
        predictCPUMicros.append(sendStart - start.cpu)
        sendCPUMicros.append(cpuNow - sendStart)
        if !startupLogged {
            startupLogged = true
            log(
                "startup pack_open_us=\(packOpenMicros) ready_us=\(readyMicros) ready_cpu_us=\(readyCPUMicros)"
                    + " first_work_us=\(pendingKeyMicros + spent)")
        }
        suggestMicros.append(spent)
        workMicros.append(pendingKeyMicros + spent)
        workCPUMicros.append(pendingKeyCPUMicros + cpuNow - start.cpu)
        pendingKeyMicros = 0
        pendingKeyCPUMicros = 0
    }

    /// The work that follows the table in the same idle callback (`InputSession.checkFinishedWord()`).
    func recordAfterTable(since start: Stamp) {
        afterMicros.append(Self.now() - start.wall)
        afterCPUMicros.append(Self.threadCPUTime() - start.cpu)
    }

    /// Nil unless the variable holds a positive whole number.
    init?(environment value: String?, packBytes: Int) {
        guard let value, let interval = Int(value), interval > 0 else { return nil }
        self.interval = interval
        self.packBytes = packBytes
    }

    func keyPressed() {
        presses += 1
        if presses % interval == 0 { report() }
    }

    func report() {
        let status = Self.status()
        log(
            "memory keys=\(presses) rss_kb=\(status["VmRSS"] ?? -1) hwm_kb=\(status["VmHWM"] ?? -1)"
                + " heap_in_use_kb=\(inkling_heap_in_use() / 1024) heap_held_kb=\(inkling_heap_held() / 1024)"
                + " pack_mapped_bytes=\(packBytes) engines_live=\(EngineInstance.live)"
                + " engines_created=\(EngineProcess.engineCount)"
                + " key_us_p50=\(Self.percentile(keyMicros, 50)) key_us_p99=\(Self.percentile(keyMicros, 99))"
                + " key_us_max=\(keyMicros.max() ?? 0)"
                + " suggest_us_p50=\(Self.percentile(suggestMicros, 50)) suggest_us_p99=\(Self.percentile(suggestMicros, 99))"
                + " suggest_us_max=\(suggestMicros.max() ?? 0) suggest_count=\(suggestMicros.count)"
                + " work_us_p50=\(Self.percentile(workMicros, 50)) work_us_p99=\(Self.percentile(workMicros, 99))"
                + " work_cpu_us_p50=\(Self.percentile(workCPUMicros, 50)) work_cpu_us_p99=\(Self.percentile(workCPUMicros, 99))"
                + " predict_cpu_us_p50=\(Self.percentile(predictCPUMicros, 50)) predict_cpu_us_p99=\(Self.percentile(predictCPUMicros, 99))"
                + " send_cpu_us_p50=\(Self.percentile(sendCPUMicros, 50)) send_cpu_us_p99=\(Self.percentile(sendCPUMicros, 99))"
                + " after_us_p50=\(Self.percentile(afterMicros, 50)) after_us_p99=\(Self.percentile(afterMicros, 99))"
                + " after_us_max=\(afterMicros.max() ?? 0)"
                + " after_cpu_us_p50=\(Self.percentile(afterCPUMicros, 50)) after_cpu_us_p99=\(Self.percentile(afterCPUMicros, 99))"
        )
        keyMicros.removeAll(keepingCapacity: true)
        suggestMicros.removeAll(keepingCapacity: true)
        workMicros.removeAll(keepingCapacity: true)
        workCPUMicros.removeAll(keepingCapacity: true)
        predictCPUMicros.removeAll(keepingCapacity: true)
        sendCPUMicros.removeAll(keepingCapacity: true)
        afterMicros.removeAll(keepingCapacity: true)
        afterCPUMicros.removeAll(keepingCapacity: true)
    }

    private static func percentile(_ values: [Int], _ p: Int) -> Int {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, (sorted.count - 1) * p / 100)]
    }

    /// The kB figures of /proc/self/status.
    static func status() -> [String: Int] {
        guard let file = fopen("/proc/self/status", "r") else { return [:] }
        defer { fclose(file) }
        var result: [String: Int] = [:]
        var buffer = [CChar](repeating: 0, count: 256)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard line.hasPrefix("Vm"), let colon = line.firstIndex(of: ":") else { continue }
            let digits = line[line.index(after: colon)...].filter(\.isNumber)
            if let value = Int(digits) { result[String(line[..<colon])] = value }
        }
        return result
    }
}

/// `INKLING_DEBUG_EVENTS=1`: logs the IBus notifications the engine receives (focus, reset,
/// capabilities, content type, surrounding-text lengths and offsets, tables shown, lengths of
/// commits and preedits). Never keys,
/// never text: only names and numbers.
enum EngineTrace {
    static let enabled: Bool = {
        guard let value = getenv("INKLING_DEBUG_EVENTS") else { return false }
        return String(cString: value) == "1"
    }()
}
