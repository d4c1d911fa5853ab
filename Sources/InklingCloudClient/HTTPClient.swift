import CCurl
import InklingCore
import Synchronization

/// Set from another thread to abort a transfer (checked by libcurl's progress callback, which
/// runs at least about once a second even when no data moves).
public final class CancelFlag: Sendable {
    public init() {}
    private let flag = Atomic<Bool>(false)
    public func set() { flag.store(true, ordering: .relaxed) }
    public var isSet: Bool { flag.load(ordering: .relaxed) }
}

/// What one POST came to.
public enum HTTPOutcome: Equatable {
    case response(status: Int, body: [UInt8])
    case cancelled
    case timeout
    case tooLarge
    /// Connection, TLS or protocol failure (libcurl's code, for the log only).
    case network(code: Int)
}

/// State shared with libcurl's callbacks for one transfer; used only on the worker thread.
private final class Transfer {
    var body: [UInt8] = []
    let limit: Int
    var tooLarge = false
    /// The response carried `Inkling-Rotate-Token: 1` (account mode).
    var asksRotation = false
    /// `Retry-After: N` (seconds) of the response, if any (an Inkling Server over a limit).
    var retryAfter: Int?
    let cancel: CancelFlag

    init(limit: Int, cancel: CancelFlag) {
        self.limit = limit
        self.cancel = cancel
    }
}

/// A blocking HTTP(S) client on one libcurl easy handle (kept between requests so the
/// connection is reused): JSON bodies, an optional bearer token, no redirects, bounded answers
/// and a deadline. Owned by a single thread. The cloud helper and `inkling account` both use it.
public final class HTTPClient {
    /// Response bodies larger than this are aborted, unless the client was made with a smaller bound.
    public static let maximumBodyBytes = 256 * 1024

    private let handle: UnsafeMutableRawPointer
    private let url: String
    /// For a loopback endpoint: never through a proxy from the environment.
    private let direct: Bool
    private let userAgent: String
    private let bodyLimit: Int

    /// Call once per process, before any thread starts.
    public static func globalInit() {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }

    /// libcurl's sentence for one of its error codes (from `HTTPOutcome.network`).
    public static func describe(curlCode code: Int) -> String {
        String(cString: curl_easy_strerror(CURLcode(rawValue: UInt32(truncatingIfNeeded: code))))
    }

    public init?(
        url: String, direct: Bool, userAgent: String = "inkling-cloud/1",
        maximumBodyBytes: Int = HTTPClient.maximumBodyBytes
    ) {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.url = url
        self.direct = direct
        self.userAgent = userAgent
        self.bodyLimit = min(maximumBodyBytes, Self.maximumBodyBytes)
    }

    deinit {
        curl_easy_cleanup(handle)
    }

    /// Whether the last response asked for the device token to be rotated (`Inkling-Rotate-Token: 1`).
    public private(set) var lastResponseAsksRotation = false
    /// The last response's `Retry-After` in seconds (the delta-seconds form only), if any.
    public private(set) var lastResponseRetryAfter: Int?

    /// POSTs `body` to the client's URL, or to `url` when given (account mode: the server's
    /// check and rotate paths on the same connection).
    public func post(body: [UInt8], bearer: String?, timeoutMilliseconds: Int, cancel: CancelFlag, url: String? = nil)
        -> HTTPOutcome
    {
        send(
            method: "POST", body: body, bearer: bearer, timeoutMilliseconds: timeoutMilliseconds, cancel: cancel,
            url: url)
    }

    /// Sends one request: `GET`, `DELETE` (optionally with a body) or `POST` (an absent body is
    /// sent as an empty one), to the client's URL or to `url` when given.
    public func send(
        method: String, body: [UInt8]?, bearer: String?, timeoutMilliseconds: Int, cancel: CancelFlag = CancelFlag(),
        url: String? = nil
    ) -> HTTPOutcome {
        curl_easy_reset(handle)
        lastResponseAsksRotation = false
        lastResponseRetryAfter = nil
        var headers: UnsafeMutablePointer<curl_slist>? = nil
        if body != nil || method == "POST" {
            headers = curl_slist_append(headers, "Content-Type: application/json")
        }
        headers = curl_slist_append(headers, "Accept: application/json")
        // No "Expect: 100-continue" round trip before the body.
        headers = curl_slist_append(headers, "Expect:")
        if let bearer {
            headers = curl_slist_append(headers, "Authorization: Bearer " + bearer)
        }
        defer { curl_slist_free_all(headers) }

        let transfer = Transfer(limit: bodyLimit, cancel: cancel)
        let context = Unmanaged.passRetained(transfer)
        defer { context.release() }

        let timeout = max(1, timeoutMilliseconds)
        _ = inkling_curl_set_string(handle, CURLOPT_URL, url ?? self.url)
        _ = inkling_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = inkling_curl_set_long(handle, CURLOPT_TIMEOUT_MS, timeout)
        _ = inkling_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, min(timeout, 10_000))
        // Redirects could carry the key elsewhere.
        _ = inkling_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        if direct { _ = inkling_curl_set_string(handle, CURLOPT_NOPROXY, "*") }
        _ = inkling_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = inkling_curl_set_string(handle, CURLOPT_USERAGENT, userAgent)
        _ = inkling_curl_set_string(handle, CURLOPT_ACCEPT_ENCODING, "")
        _ = inkling_curl_set_long(handle, CURLOPT_MAXFILESIZE, bodyLimit)
        _ = inkling_curl_set_headers(handle, headers)
        if method == "POST" || body != nil {
            _ = inkling_curl_set_long(handle, CURLOPT_POST, 1)
            let payload = body ?? []
            let bodyCode =
                payload.isEmpty
                ? inkling_curl_set_post_body(handle, "", 0)
                : payload.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { chars in
                        inkling_curl_set_post_body(handle, chars.baseAddress, buffer.count)
                    }
                }
            guard bodyCode == CURLE_OK else { return .network(code: Int(bodyCode.rawValue)) }
        }
        if method != "POST" && method != "GET" {
            _ = inkling_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, method)
        }
        _ = inkling_curl_set_write(
            handle,
            { data, size, count, user in
                guard let user else { return 0 }
                let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
                let length = size * count
                if transfer.cancel.isSet { return 0 }
                if transfer.body.count + length > transfer.limit {
                    transfer.tooLarge = true
                    return 0
                }
                if length > 0, let data {
                    transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
                }
                return length
            }, context.toOpaque())
        _ = inkling_curl_set_xferinfo(
            handle,
            { user, _, _, _, _ in
                guard let user else { return 1 }
                return Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue().cancel.isSet ? 1 : 0
            }, context.toOpaque())

        _ = inkling_curl_set_header_callback(
            handle,
            { data, size, count, user in
                guard let user else { return 0 }
                let length = size * count
                if let data, length > 0, length < 256 {
                    let line = Array(UnsafeRawBufferPointer(start: data, count: length))
                    let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
                    if HTTPHeaderLine.asksRotation(line) { transfer.asksRotation = true }
                    if let seconds = HTTPHeaderLine.retryAfterSeconds(line) { transfer.retryAfter = seconds }
                }
                return length
            }, context.toOpaque())

        let code = curl_easy_perform(handle)
        lastResponseAsksRotation = transfer.asksRotation
        lastResponseRetryAfter = transfer.retryAfter
        if cancel.isSet { return .cancelled }
        if transfer.tooLarge || code == CURLE_FILESIZE_EXCEEDED { return .tooLarge }
        switch code {
        case CURLE_OK:
            return .response(status: inkling_curl_response_code(handle), body: transfer.body)
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout
        case CURLE_ABORTED_BY_CALLBACK:
            return .cancelled
        default:
            return .network(code: Int(code.rawValue))
        }
    }
}
