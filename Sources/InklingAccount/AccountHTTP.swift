import FoundationEssentials
import Glibc
import InklingCloudClient
import InklingCore

/// Blocking HTTP requests to an Inkling Server for `inkling account`, through the cloud helper's
/// libcurl client (`HTTPClient`): JSON bodies, a bearer token when given, no redirects (they
/// could carry the token elsewhere), no proxy for a server on this machine, bounded answers and a
/// deadline.
public enum AccountHTTP {
    /// One answer.
    public struct Response: Sendable, Equatable {
        public var status: Int
        public var body: [UInt8]
        /// `Retry-After` in seconds, when the server sent one.
        public var retryAfter: Int?
    }

    /// Largest answer read.
    public static let maximumBodyBytes = 64 * 1024

    /// Call once per process before the first request.
    public static func globalInit() {
        HTTPClient.globalInit()
    }

    /// Sends one request; the answer, or a sentence saying why there is none (the server could
    /// not be reached, timed out, answered too much).
    public static func request(
        _ method: String, url: String, bearer: String? = nil, body: [UInt8]? = nil, timeoutMilliseconds: Int = 15_000
    ) -> Result<Response, AccountServerProblem> {
        guard
            let client = HTTPClient(
                url: url, direct: AccountServer.isLoopbackURL(url), userAgent: "inkling-account/1",
                maximumBodyBytes: maximumBodyBytes)
        else { return .failure(AccountServerProblem("libcurl failed to start")) }
        let outcome = client.send(
            method: method, body: body, bearer: bearer, timeoutMilliseconds: timeoutMilliseconds)
        switch outcome {
        case .response(let status, let answer):
            return .success(Response(status: status, body: answer, retryAfter: client.lastResponseRetryAfter))
        case .tooLarge:
            return .failure(AccountServerProblem("the server's answer is too large"))
        case .timeout:
            return .failure(AccountServerProblem("the server did not answer in time"))
        case .cancelled:
            return .failure(AccountServerProblem("the request was cancelled"))
        case .network(let code):
            return .failure(AccountServerProblem(HTTPClient.describe(curlCode: code)))
        }
    }
}

/// Unix seconds on this machine's clock; injectable for tests.
public protocol WallClock: Sendable {
    func seconds() -> Int64
}

/// The real clock (CLOCK_REALTIME).
public struct SystemWallClock: WallClock {
    public init() {}
    public func seconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }
}
