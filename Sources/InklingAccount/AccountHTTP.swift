import CCurl
import FoundationEssentials
import Glibc
import InklingCore

/// Blocking HTTP requests to an Inkling Server for `inkling account` (libcurl): JSON bodies, a
/// bearer token when given, no redirects (they could carry the token elsewhere), no proxy for a
/// server on this machine, bounded answers and a deadline.
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

    private final class Transfer {
        var body: [UInt8] = []
        var retryAfter: Int?
        var tooLarge = false
    }

    /// Call once per process before the first request.
    public static func globalInit() {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }

    /// Sends one request; the answer, or a sentence saying why there is none (the server could
    /// not be reached, timed out, answered too much).
    public static func request(
        _ method: String, url: String, bearer: String? = nil, body: [UInt8]? = nil, timeoutMilliseconds: Int = 15_000
    ) -> Result<Response, AccountServerProblem> {
        guard let handle = curl_easy_init() else { return .failure(AccountServerProblem("libcurl failed to start")) }
        defer { curl_easy_cleanup(handle) }
        var headers: UnsafeMutablePointer<curl_slist>? = nil
        headers = curl_slist_append(headers, "Accept: application/json")
        headers = curl_slist_append(headers, "Expect:")
        if body != nil { headers = curl_slist_append(headers, "Content-Type: application/json") }
        if let bearer { headers = curl_slist_append(headers, "Authorization: Bearer " + bearer) }
        defer { curl_slist_free_all(headers) }

        let transfer = Transfer()
        let context = Unmanaged.passRetained(transfer)
        defer { context.release() }
        _ = inkling_curl_set_string(handle, CURLOPT_URL, url)
        _ = inkling_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = inkling_curl_set_long(handle, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        _ = inkling_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, min(timeoutMilliseconds, 10_000))
        _ = inkling_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        if AccountServer.isLoopbackURL(url) { _ = inkling_curl_set_string(handle, CURLOPT_NOPROXY, "*") }
        _ = inkling_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = inkling_curl_set_string(handle, CURLOPT_USERAGENT, "inkling-account/1")
        _ = inkling_curl_set_headers(handle, headers)
        if let body {
            _ = inkling_curl_set_long(handle, CURLOPT_POST, 1)
            let code = body.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    inkling_curl_set_post_body(handle, $0.baseAddress, buffer.count)
                }
            }
            guard code == CURLE_OK else {
                return .failure(AccountServerProblem(String(cString: curl_easy_strerror(code))))
            }
        }
        if method != "GET" && !(method == "POST" && body != nil) {
            if method == "POST" {
                _ = inkling_curl_set_long(handle, CURLOPT_POST, 1)
                _ = inkling_curl_set_post_body(handle, "", 0)
            } else {
                _ = inkling_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, method)
            }
        }
        _ = inkling_curl_set_write(
            handle,
            { data, size, count, user in
                guard let user else { return 0 }
                let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
                let length = size * count
                if transfer.body.count + length > AccountHTTP.maximumBodyBytes {
                    transfer.tooLarge = true
                    return 0
                }
                if length > 0, let data {
                    transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
                }
                return length
            }, context.toOpaque())
        _ = inkling_curl_set_header_callback(
            handle,
            { data, size, count, user in
                guard let user else { return 0 }
                let length = size * count
                if let data,
                    let seconds = HTTPHeaderLine.retryAfterSeconds(
                        Array(UnsafeRawBufferPointer(start: data, count: length)))
                {
                    Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue().retryAfter = seconds
                }
                return length
            }, context.toOpaque())
        let code = curl_easy_perform(handle)
        if transfer.tooLarge { return .failure(AccountServerProblem("the server's answer is too large")) }
        guard code == CURLE_OK else { return .failure(AccountServerProblem(String(cString: curl_easy_strerror(code)))) }
        return .success(
            Response(status: inkling_curl_response_code(handle), body: transfer.body, retryAfter: transfer.retryAfter))
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
