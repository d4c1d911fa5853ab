import InklingCloudClient
import InklingServerCore
import Synchronization

/// The libcurl clients of the worker threads (one easy handle per concurrent request, reused so
/// connections to the upstream stay open). Sends with the server's key.
final class Upstream: Sendable {
    private let url: String
    private let direct: Bool
    private let key: String?
    private let timeoutMilliseconds: Int
    private let idle = Mutex<[ClientBox]>([])

    private struct ClientBox: @unchecked Sendable {
        let client: HTTPClient
    }

    init(endpoint: String, key: String?, timeoutMilliseconds: Int) {
        url = endpoint + "/chat/completions"
        let lower = endpoint.lowercased()
        direct = lower.hasPrefix("http://127.") || lower.hasPrefix("http://localhost") || lower.hasPrefix("http://[::1]")
        self.key = key
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    func post(_ body: [UInt8]) -> UpstreamOutcome {
        guard let client = idle.withLock({ $0.popLast()?.client }) ?? HTTPClient(url: url, direct: direct) else { return .failed }
        defer { idle.withLock { $0.append(ClientBox(client: client)) } }
        switch client.post(body: body, bearer: key, timeoutMilliseconds: timeoutMilliseconds, cancel: CancelFlag()) {
        case let .response(status, body): return .response(status: status, body: body)
        case .timeout: return .timeout
        case .cancelled, .tooLarge, .network: return .failed
        }
    }
}
