/// A message from the engine to the cloud helper, as a typed value: the session produces these,
/// the router renumbers them, and only the glue turns them into protocol lines.
public enum CloudRequestMessage: Equatable, Sendable {
    /// Check a sentence.
    case check(CloudCheckRequest)
    /// Forget the request with this id (its answer is no longer wanted).
    case cancel(id: Int)
    /// Exit.
    case shutdown

    /// The protocol line (with its trailing newline) for this message.
    public var line: String {
        switch self {
        case .check(let request): return CloudLine.encode(request)
        case .cancel(let id): return CloudLine.cancel(id: id)
        case .shutdown: return CloudLine.shutdown
        }
    }
}
