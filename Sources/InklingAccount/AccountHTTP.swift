import CCurl
import FoundationEssentials
import Glibc

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
                buffer.withMemoryRebound(to: CChar.self) { inkling_curl_set_post_body(handle, $0.baseAddress, buffer.count) }
            }
            guard code == CURLE_OK else { return .failure(AccountServerProblem(String(cString: curl_easy_strerror(code)))) }
        }
        if method != "GET" && !(method == "POST" && body != nil) {
            if method == "POST" {
                _ = inkling_curl_set_long(handle, CURLOPT_POST, 1)
                _ = inkling_curl_set_post_body(handle, "", 0)
            } else {
                _ = inkling_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, method)
            }
        }
        _ = inkling_curl_set_write(handle, { data, size, count, user in
            guard let user else { return 0 }
            let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
            let length = size * count
            if transfer.body.count + length > AccountHTTP.maximumBodyBytes {
                transfer.tooLarge = true
                return 0
            }
            if length > 0, let data { transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length)) }
            return length
        }, context.toOpaque())
        _ = inkling_curl_set_header_callback(handle, { data, size, count, user in
            guard let user else { return 0 }
            let length = size * count
            if let data, let seconds = AccountHTTP.retryAfter(headerLine: UnsafeRawBufferPointer(start: data, count: length)) {
                Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue().retryAfter = seconds
            }
            return length
        }, context.toOpaque())
        let code = curl_easy_perform(handle)
        if transfer.tooLarge { return .failure(AccountServerProblem("the server's answer is too large")) }
        guard code == CURLE_OK else { return .failure(AccountServerProblem(String(cString: curl_easy_strerror(code)))) }
        return .success(Response(status: inkling_curl_response_code(handle), body: transfer.body, retryAfter: transfer.retryAfter))
    }

    /// The seconds of a `Retry-After: N` header line; nil for any other line.
    static func retryAfter(headerLine: UnsafeRawBufferPointer) -> Int? {
        guard let value = headerValue(named: "retry-after", in: Array(headerLine)) else { return nil }
        return Int(value).flatMap { $0 >= 0 ? $0 : nil }
    }

    /// The trimmed value of a header line `Name: value` when its name is `lowercaseName`.
    public static func headerValue(named lowercaseName: String, in line: [UInt8]) -> String? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        guard name == lowercaseName else { return nil }
        let value = line[(colon + 1)...].filter { $0 != 0x0D && $0 != 0x0A }
        let text = String(decoding: value, as: UTF8.self)
        return text.trimmingSpaces()
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while scalars.first == " " || scalars.first == "\t" { scalars.removeFirst() }
        while scalars.last == " " || scalars.last == "\t" { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars))
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
