import Dispatch
import FoundationEssentials
import Glibc
import InklingAccount
import InklingCloudClient
import InklingCore
import Synchronization

/// Replies go to stdout as whole lines, one writer at a time.
final class Output: Sendable {
    private let lock = Mutex<Int32>(1)

    func send(_ reply: CloudReply) {
        let line = CloudLine.encode(reply)
        guard !line.isEmpty else { return }
        lock.withLock { fd in
            if !Output.writeAll(fd: fd, Array(line.utf8)) {
                // The engine is gone: nothing left to do.
                _exit(0)
            }
        }
    }

    /// Ends the process without cutting a line in half (unless a write is stuck).
    func exit() -> Never {
        lock.withLockIfAvailable { _ in _exit(0) }
        _exit(0)
    }

    static func writeAll(fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
    }
}

/// One check waiting for or on the network.
final class Job: Sendable {
    let request: CloudCheckRequest
    let cacheKey: String
    /// Monotonic milliseconds after which the answer is no longer worth having.
    let deadline: UInt64
    let cancel = CancelFlag()

    init(request: CloudCheckRequest, cacheKey: String, deadline: UInt64) {
        self.request = request
        self.cacheKey = cacheKey
        self.deadline = deadline
    }
}

/// Error messages of `error` replies (the protocol's `message`).
enum CloudError {
    static let timeout = "timeout"
    static let circuitOpen = "circuit open"
    static let overloaded = "overloaded"
    static let tooLong = "sentence too long"
    static let network = "network"
    static let badResponse = "bad response"
    static let responseTooLarge = "response too large"
    /// Account mode: the server refused the device token; `inkling account login` again.
    static let signInRequired = "sign-in required"
    /// Account mode: the server is over a limit for this user (429); asked again after `Retry-After`.
    static let rateLimited = "rate limited"
    static func http(_ status: Int) -> String { "http \(status)" }
}

/// The helper's logic between the pipe and the network: cache, circuit breaker, a bounded queue
/// of pending checks, one worker doing HTTP, cancellation.
///
/// Threads: the main thread reads stdin and calls `handle(line:)`; it answers cache hits,
/// an open circuit and bad requests at once and queues the rest. The worker thread runs
/// `runWorker`, taking one job at a time. Shared state lives behind one mutex.
final class Service: Sendable {
    struct State {
        var pending: [Job] = []
        var current: Job?
        var cache = LRUCache<String, CloudReply>(capacity: Service.cacheCapacity)
        var breaker: CircuitBreaker
        var ignoredLines = 0
        /// Set while the helper has no device token and can read the keyring: when to look for
        /// a sign-in (the worker looks; `check` lets a check past an open circuit when a look is
        /// due, see `KeyringLookSchedule.admits`).
        var signInLooks: KeyringLookSchedule?
        var signInMarkerPath: String?
    }

    static let maximumPending = 4
    static let cacheCapacity = 64
    /// A job with less time left than this when the worker reaches it times out unsent.
    static let minimumUsefulMilliseconds: UInt64 = 50

    let options: Options
    let clock: any MonotonicClock
    let output: Output
    private let state: Mutex<State>
    private let wake = DispatchSemaphore(value: 0)

    init(options: Options, clock: any MonotonicClock, output: Output) {
        self.options = options
        self.clock = clock
        self.output = output
        state = Mutex(State(breaker: CircuitBreaker(baseOpenMilliseconds: options.breakerMilliseconds)))
    }

    // MARK: Input (main thread)

    private struct Envelope: Decodable {
        var v: Int
        var type: String
        var id: Int?
    }

    enum LineEffect: Equatable {
        case handled
        case shutdown
    }

    /// Handles one input line (without its newline).
    func handle(line: [UInt8]) -> LineEffect {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return .handled }
        let data = Data(line)
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: data) else {
            ignore(bytes: line.count, reason: "not a protocol message")
            return .handled
        }
        guard envelope.v == CloudProtocol.version else {
            ignore(bytes: line.count, reason: "another protocol version")
            return .handled
        }
        switch envelope.type {
        case "shutdown":
            return .shutdown
        case "cancel":
            guard let id = envelope.id else {
                ignore(bytes: line.count, reason: "cancel without id")
                return .handled
            }
            cancel(id: id)
        case "check":
            guard let request = try? JSONDecoder().decode(CloudCheckRequest.self, from: data) else {
                ignore(bytes: line.count, reason: "malformed check")
                return .handled
            }
            check(request)
        default:
            ignore(bytes: line.count, reason: "unknown type")
        }
        return .handled
    }

    func ignore(bytes: Int, reason: StaticString) {
        let count = state.withLock { state in
            state.ignoredLines += 1
            return state.ignoredLines
        }
        // Content-free, and quieter after the first few.
        if count <= 10 || count % 100 == 0 {
            Log.note("ignored an input line", detail: reason, ("count", count), ("bytes", bytes))
        }
    }

    static func cacheKey(for request: CloudCheckRequest) -> String {
        var key = request.language + "\u{1}" + request.sentence
        for flag in request.flags {
            key += "\u{1}\(flag.start):\(flag.end):\(flag.word)\u{2}" + flag.replacements.joined(separator: "\u{2}")
        }
        return key
    }

    func check(_ request: CloudCheckRequest) {
        if request.sentence.unicodeScalars.count > CloudProtocol.maximumSentenceScalars {
            output.send(CloudReply(type: "error", id: request.id, message: CloudError.tooLong))
            return
        }
        let now = clock.milliseconds()
        let key = Self.cacheKey(for: request)
        let job = Job(request: request, cacheKey: key, deadline: now + UInt64(options.timeoutMilliseconds))
        enum Decision {
            case reply(CloudReply)
            case queued(dropped: Job?)
        }
        let decision: Decision = state.withLock { state in
            if var cached = state.cache.value(for: key) {
                cached.id = request.id
                return .reply(cached)
            }
            let breakerAllows = state.breaker.allows(now: now)
            if !breakerAllows {
                // Waiting for a sign-in: the marker is read only while the circuit is open.
                let marker = state.signInMarkerPath.flatMap { SignInMarker.stamp(path: $0) }
                guard let looks = state.signInLooks, looks.admits(now: now, marker: marker, breakerAllows: false)
                else {
                    return .reply(CloudReply(type: "error", id: request.id, message: CloudError.circuitOpen))
                }
            }
            var dropped: Job?
            if state.pending.count >= Self.maximumPending {
                dropped = state.pending.removeFirst()
            }
            state.pending.append(job)
            return .queued(dropped: dropped)
        }
        switch decision {
        case .reply(let reply):
            output.send(reply)
        case .queued(let dropped):
            if let dropped {
                Log.note("queue full, dropped the oldest pending check", ("id", dropped.request.id))
                output.send(CloudReply(type: "error", id: dropped.request.id, message: CloudError.overloaded))
            }
            wake.signal()
        }
    }

    /// A cancelled check gets no reply: it is taken out of the queue, or its transfer is aborted.
    func cancel(id: Int) {
        state.withLock { state in
            state.pending.removeAll { $0.request.id == id }
            if let current = state.current, current.request.id == id { current.cancel.set() }
        }
    }

    // MARK: Worker thread

    /// Resolves the key, then serves jobs forever.
    func runWorker(environment: @escaping (String) -> String?) {
        let url = options.endpoint + "/chat/completions"
        guard let client = HTTPClient(url: url, direct: options.isLoopback) else {
            Log.note("libcurl could not be initialized")
            output.exit()
        }
        let key = KeySource.resolve(options: options, environment: environment)
        // Account mode when the keyring holds a device token for this endpoint (an Inkling
        // Server). Without one the keyring is looked at again at once after `inkling account
        // login` rewrote the sign-in marker, and (without an API key) now and then.
        let keyringUsable = options.useKeyring && AccountKeyring.sessionBusAvailable(environment: environment)
        let wall = SystemWallClock()
        let markerPath = SignInMarker.path(environment: environment)
        var account =
            keyringUsable
            ? AccountMode.start(
                endpoint: options.endpoint, clock: clock, wall: wall, output: output, markerPath: markerPath) : nil
        func marker() -> SignInMarker.Stamp? { markerPath.flatMap { SignInMarker.stamp(path: $0) } }
        if account == nil, keyringUsable {
            // A token for the endpoint wins over an API key, at start and later: with a key the
            // keyring is read only when the sign-in marker changed, never by the interval.
            let looks = KeyringLookSchedule(
                interval: key == nil ? options.accountLookMilliseconds : UInt64.max, lookedAt: clock.milliseconds(),
                marker: marker())
            state.withLock { state in
                state.signInLooks = looks
                state.signInMarkerPath = markerPath
            }
        }
        while true {
            wake.wait()
            // Taken off the queue and made current in one step, so a cancel always finds it.
            let next: Job? = state.withLock { state in
                guard !state.pending.isEmpty else { return nil }
                state.current = state.pending.removeFirst()
                return state.current
            }
            guard let job = next else { continue }
            if account == nil, keyringUsable {
                let stamp = marker()
                let now = clock.milliseconds()
                let due = state.withLock { state in
                    guard state.signInLooks?.isDue(now: now, marker: stamp) == true else { return false }
                    state.signInLooks?.looked(now: now, marker: stamp)
                    return true
                }
                if due {
                    account = AccountMode.start(
                        endpoint: options.endpoint, clock: clock, wall: wall, output: output, markerPath: markerPath)
                }
                if account != nil {
                    // The failures so far were the chat-completions path's: the account mode
                    // starts with a closed circuit.
                    let breaker = CircuitBreaker(baseOpenMilliseconds: options.breakerMilliseconds)
                    state.withLock { state in
                        state.signInLooks = nil
                        state.breaker = breaker
                    }
                }
            }
            if let reply = serve(job, client: client, key: key, account: account) {
                output.send(reply)
            }
        }
    }

    /// The reply for one job, or nil if it was cancelled.
    func serve(_ job: Job, client: HTTPClient, key: String?, account: AccountMode? = nil) -> CloudReply? {
        let request = job.request
        let now = clock.milliseconds()
        enum Start {
            case reply(CloudReply?)
            case send(remaining: UInt64)
        }
        let start: Start = state.withLock { state in
            // `current` is this job (set when it was taken off the queue); it stays set only
            // while the transfer runs.
            state.current = nil
            if job.cancel.isSet { return .reply(nil) }
            if var cached = state.cache.value(for: job.cacheKey) {
                cached.id = request.id
                return .reply(cached)
            }
            if !state.breaker.allows(now: now) {
                return .reply(CloudReply(type: "error", id: request.id, message: CloudError.circuitOpen))
            }
            guard job.deadline > now + Self.minimumUsefulMilliseconds else {
                return .reply(CloudReply(type: "error", id: request.id, message: CloudError.timeout))
            }
            state.current = job
            return .send(remaining: job.deadline - now)
        }
        let remaining: UInt64
        switch start {
        case .reply(let reply): return reply
        case .send(let value): remaining = value
        }

        let outcome: HTTPOutcome
        if let account {
            switch account.check(request, client: client, timeoutMilliseconds: Int(remaining), cancel: job.cancel) {
            case .refused:
                state.withLock { $0.current = nil }
                return job.cancel.isSet
                    ? nil : CloudReply(type: "error", id: request.id, message: CloudError.signInRequired)
            case .rateLimited:
                state.withLock { $0.current = nil }
                return job.cancel.isSet
                    ? nil : CloudReply(type: "error", id: request.id, message: CloudError.rateLimited)
            case .outcome(let result):
                outcome = result
            }
        } else {
            let body = ChatCompletion.requestBody(model: options.model, request: request)
            outcome = client.post(body: body, bearer: key, timeoutMilliseconds: Int(remaining), cancel: job.cancel)
        }
        let finished = clock.milliseconds()

        var reply: CloudReply?
        var succeeded: Bool?
        var cacheable = false
        var status = 0
        switch outcome {
        case .cancelled:
            reply = nil
        case .timeout:
            reply = CloudReply(type: "error", id: request.id, message: CloudError.timeout)
            succeeded = false
        case .tooLarge:
            reply = CloudReply(type: "error", id: request.id, message: CloudError.responseTooLarge)
            succeeded = false
        case .network(let code):
            status = -code
            reply = CloudReply(type: "error", id: request.id, message: CloudError.network)
            succeeded = false
        case .response(let code, let responseBody):
            status = code
            if account != nil, code == 401 {
                // Not the network's fault: no reason to open the circuit.
                reply = CloudReply(type: "error", id: request.id, message: CloudError.signInRequired)
            } else if account != nil, code == 429 {
                // A limit of this user's, not a failing server: the account mode waits for Retry-After.
                reply = CloudReply(type: "error", id: request.id, message: CloudError.rateLimited)
            } else if !(200..<300).contains(code) {
                reply = CloudReply(type: "error", id: request.id, message: CloudError.http(code))
                succeeded = false
            } else if account != nil {
                // An Inkling Server answers with the model-output object itself (`CheckAnswer`).
                let parsed = ChatCompletion.reply(
                    fromContent: String(decoding: responseBody, as: UTF8.self), request: request)
                reply = parsed.reply.validated(against: request)
                cacheable = parsed.wellFormed
                succeeded = true
            } else if let content = ChatCompletion.content(fromResponseBody: responseBody) {
                let parsed = ChatCompletion.reply(fromContent: content, request: request)
                reply = parsed.reply.validated(against: request)
                cacheable = parsed.wellFormed
                succeeded = true
            } else {
                reply = CloudReply(type: "error", id: request.id, message: CloudError.badResponse)
                succeeded = false
            }
        }

        let (cancelled, breakerOpen) = state.withLock { state in
            state.current = nil
            if succeeded == true {
                state.breaker.recordSuccess()
                if cacheable, var stored = reply {
                    stored.id = nil
                    state.cache.insert(stored, for: job.cacheKey)
                }
            } else if succeeded == false {
                state.breaker.recordFailure(now: finished)
            }
            return (job.cancel.isSet, !state.breaker.allows(now: finished))
        }
        if succeeded == false || options.verbose {
            Log.note(
                succeeded == false ? "check failed" : "check done",
                ("id", request.id), ("scalars", request.sentence.unicodeScalars.count), ("flags", request.flags.count),
                ("status", status), ("ms", Int(finished - now)), ("circuit_open", breakerOpen ? 1 : 0))
        }
        return cancelled ? nil : reply
    }
}
