/// What the engine's supervisor (`ibus-engine-inkling --supervise`) does when the engine process
/// ends: the decision, not the process handling, lives here.
///
/// ibus-daemon never restarts an engine that died: every input context loses it and keys reach
/// applications raw until the user selects the engine again. So a crash (an end by a signal) is
/// answered by a restart, at once the first time and then with a growing delay; more than
/// `maximumCrashes` crashes within `window` is a crash loop, and the supervisor gives up rather
/// than spin. An engine that exits by itself (the bus went away, it could not connect), that was
/// asked to stop, or that a termination signal ended before it could handle it (SIGTERM, SIGINT,
/// SIGHUP: someone meant it to end) is not restarted: the supervisor ends with it.
public struct EngineRestartPolicy: Sendable {
    /// How the engine process ended.
    public enum Ending: Equatable, Sendable {
        /// `exit(status)`: the engine ended by itself.
        case exited(status: Int32)
        /// Killed by a signal (SIGSEGV, SIGKILL, SIGILL, SIGBUS, SIGABRT…).
        case killedBySignal(Int32)
    }

    /// What the supervisor does next.
    public enum Decision: Equatable, Sendable {
        /// Ends with this exit status (no restart).
        case exit(status: Int32)
        /// Starts a fresh engine after this many milliseconds.
        case restart(afterMilliseconds: Int64)
        /// A crash loop: ends with this exit status, saying why.
        case giveUp(status: Int32)
    }

    /// SIGHUP, SIGINT and SIGTERM (Linux numbers): an end that was asked for, not a crash.
    public static let terminationSignals: Set<Int32> = [1, 2, 15]

    /// Crashes older than this (milliseconds) no longer count.
    public var window: Int64 = 60_000
    /// Crashes within `window` that are still answered by a restart.
    public var maximumCrashes = 5
    /// The delay before the second restart within the window (the first one is immediate); it
    /// doubles with every further crash, up to `maximumDelay`.
    public var secondDelay: Int64 = 500
    /// The longest delay between a crash and the restart.
    public var maximumDelay: Int64 = 8_000

    /// Times (milliseconds, any monotonic clock) of the crashes within the window.
    private var crashes: [Int64] = []

    public init() {}

    /// The engine ended at `now`; `stopRequested`: the supervisor had forwarded a termination
    /// signal to it (the daemon or the session is ending).
    public mutating func engineEnded(_ ending: Ending, stopRequested: Bool, now: Int64) -> Decision {
        if stopRequested {
            switch ending {
            case .exited(let status): return .exit(status: status)
            case .killedBySignal(let signal): return .exit(status: Self.status(forSignal: signal))
            }
        }
        switch ending {
        case .exited(let status):
            return .exit(status: status)
        case .killedBySignal(let signal) where Self.terminationSignals.contains(signal):
            return .exit(status: Self.status(forSignal: signal))
        case .killedBySignal(let signal):
            crashes.removeAll { now - $0 >= window || $0 > now }
            crashes.append(now)
            if crashes.count > maximumCrashes { return .giveUp(status: Self.status(forSignal: signal)) }
            guard crashes.count > 1 else { return .restart(afterMilliseconds: 0) }
            let doublings = min(crashes.count - 2, 30)
            return .restart(afterMilliseconds: min(maximumDelay, secondDelay << Int64(doublings)))
        }
    }

    /// The shell's convention for "ended by signal N": 128 + N (clamped to a valid status).
    public static func status(forSignal signal: Int32) -> Int32 {
        max(1, min(255, 128 + signal))
    }
}
