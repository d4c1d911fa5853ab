import Synchronization

/// Where a `POST /v1/check` runs: on the HTTP thread that received it, or handed to the upstream
/// threads while its connection is suspended.
///
/// Handing over costs two thread wake-ups and the suspend/resume bookkeeping of the HTTP library
/// per check — a quarter of the throughput against an upstream that answers within a millisecond,
/// nothing against a provider that takes hundreds. So a check is answered in place only while the
/// upstream is plainly fast: its last `fastRunNeeded` calls all succeeded within `fastMilliseconds`,
/// no call now under way has been running longer than that, and fewer than `maximumInline` HTTP
/// threads are answering a check themselves. When the upstream turns slow, at most
/// `maximumInline` HTTP threads (half of them, as configured by the server) wait on it, each for
/// one call; every later check is handed over until the upstream is fast again.
public final class CheckPlacement: Sendable {
    public struct Settings: Sendable, Equatable {
        /// An upstream call at least this long (or failed) counts as slow; 0 never answers in place.
        public var fastMilliseconds: UInt64
        /// HTTP threads that may answer a check themselves at once; 0 never answers in place.
        public var maximumInline: Int
        /// Fast calls in a row needed before checks are answered in place (again).
        public var fastRunNeeded: Int

        public init(fastMilliseconds: UInt64, maximumInline: Int, fastRunNeeded: Int = 16) {
            self.fastMilliseconds = fastMilliseconds
            self.maximumInline = maximumInline
            self.fastRunNeeded = fastRunNeeded
        }

        /// The server's placement: up to half of `httpThreads` answer in place, and none unless
        /// the upstream timeout is shorter than the idle timeout. (The other connections of an HTTP
        /// thread caught in a slow call wait for it; the HTTP library checks idle timeouts before
        /// reading what arrived meanwhile, so a wait past the idle timeout would cut them.)
        public static func server(
            httpThreads: Int, fastMilliseconds: UInt64, upstreamTimeoutMilliseconds: UInt64,
            idleTimeoutMilliseconds: UInt64
        ) -> Settings {
            let inline = upstreamTimeoutMilliseconds < idleTimeoutMilliseconds ? httpThreads / 2 : 0
            return Settings(fastMilliseconds: fastMilliseconds, maximumInline: inline)
        }
    }

    /// One upstream call under way, from `upstreamStarted` to `upstreamFinished`.
    public struct Call: Sendable {
        let id: UInt64
        let started: UInt64
    }

    private struct State {
        var fastRun = 0
        var inline = 0
        var nextID: UInt64 = 0
        /// Start times (monotonic ms) of the upstream calls under way, by call.
        var underWay: [UInt64: UInt64] = [:]
    }

    public let settings: Settings
    private let state = Mutex(State())

    public init(_ settings: Settings) {
        self.settings = settings
    }

    /// Whether the calling HTTP thread answers this check itself (`now`: monotonic ms). When true
    /// it holds one of the `maximumInline` places until `inlineFinished()`.
    public func answerInPlace(now: UInt64) -> Bool {
        guard settings.fastMilliseconds > 0, settings.maximumInline > 0 else { return false }
        return state.withLock { state in
            guard state.inline < settings.maximumInline, state.fastRun >= settings.fastRunNeeded else { return false }
            for started in state.underWay.values where now >= started && now - started >= settings.fastMilliseconds {
                return false
            }
            state.inline += 1
            return true
        }
    }

    /// The check answered in place is done: its place is free again.
    public func inlineFinished() {
        state.withLock { $0.inline = max(0, $0.inline - 1) }
    }

    /// An upstream call begins (on whichever thread).
    public func upstreamStarted(now: UInt64) -> Call {
        state.withLock { state in
            state.nextID &+= 1
            state.underWay[state.nextID] = now
            return Call(id: state.nextID, started: now)
        }
    }

    /// The upstream call ended; `succeeded`: a 2xx answer came back.
    public func upstreamFinished(_ call: Call, now: UInt64, succeeded: Bool) {
        let fast = succeeded && now >= call.started && now - call.started < settings.fastMilliseconds
        state.withLock { state in
            state.underWay[call.id] = nil
            state.fastRun = fast ? min(state.fastRun + 1, settings.fastRunNeeded) : 0
        }
    }
}
