import InklingCore
import Synchronization

/// What one upstream POST came to (the server's libcurl client maps its outcome to this).
public enum UpstreamOutcome: Equatable, Sendable {
    case response(status: Int, body: [UInt8])
    case timeout
    /// Connection, TLS or protocol failure, or an oversized answer.
    case failed
}

/// The result of a check through the upstream.
public enum GatewayResult: Equatable, Sendable {
    case answer(CloudReply)
    /// The circuit breaker is open: the upstream failed repeatedly just now.
    case unavailable(retryAfter: Int64)
    case timeout
    case failed
}

/// The cloud check on the server's side: the same prompt, answer parsing and validation the
/// helper applies against an upstream itself (`ChatCompletion`, `CloudReply.validated`), behind
/// one circuit breaker shared by all worker threads.
public final class Gateway: Sendable {
    public let model: String
    let breaker: Mutex<CircuitBreaker>
    let now: @Sendable () -> UInt64

    /// `now` is a monotonic clock in milliseconds.
    public init(model: String, breakerMilliseconds: UInt64 = 30_000, now: @escaping @Sendable () -> UInt64) {
        self.model = model
        breaker = Mutex(CircuitBreaker(baseOpenMilliseconds: breakerMilliseconds))
        self.now = now
    }

    /// Checks one sentence; `post` sends a chat-completions body upstream and blocks until done.
    public func check(_ request: CloudCheckRequest, post: ([UInt8]) -> UpstreamOutcome) -> GatewayResult {
        let started = now()
        let openUntil: UInt64? = breaker.withLock { $0.allows(now: started) ? nil : ($0.openUntil ?? started) }
        if let openUntil { return .unavailable(retryAfter: Int64(max(1, (openUntil - started + 999) / 1000))) }
        let outcome = post(ChatCompletion.requestBody(model: model, request: request))
        let finished = now()
        var result: GatewayResult
        switch outcome {
        case .timeout: result = .timeout
        case .failed: result = .failed
        case let .response(status, body):
            if (200..<300).contains(status), let content = ChatCompletion.content(fromResponseBody: body) {
                result = .answer(ChatCompletion.reply(fromContent: content, request: request).reply.validated(against: request))
            } else {
                result = .failed
            }
        }
        breaker.withLock { breaker in
            if case .answer = result { breaker.recordSuccess() } else { breaker.recordFailure(now: finished) }
        }
        return result
    }
}
