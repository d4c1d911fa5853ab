/// Routes cloud-check messages between the engine objects of one engine process and their one
/// shared helper.
///
/// Request ids are per session, so two engine objects may both have a request 1 out. On the way
/// out every check gets a process-wide id, remembered with the engine object (the client) and
/// the session's own id; on the way back a reply is parsed, its route looked up and removed, and
/// its id restored. Pure bookkeeping: the glue owns the process and the timers.
public struct CloudRouter: Sendable {
    /// What a line from the helper means for the engine.
    public enum Delivery: Equatable, Sendable {
        /// An answer for `client`, with the session's own request id restored.
        case reply(CloudReply, client: Int)
        /// An account `status` message; `client` is the engine object whose check found out (its
        /// route stays), else the latest requester, nil when there is none.
        case accountStatus(CloudReply, client: Int?)
        /// Nothing to deliver: malformed, a greeting, or an answer no one waits for any more.
        case ignored
    }

    private struct Route: Sendable {
        var client: Int
        var local: Int
    }

    /// Process-wide request id → where the answer goes.
    private var routes: [Int: Route] = [:]
    private var nextGlobalID = 1
    /// The engine object that sent the latest check (where an account status without a route goes).
    public private(set) var lastRequester: Int?

    public init() {}

    /// Whether any request is waiting for its answer.
    public var hasRequestsOut: Bool { !routes.isEmpty }

    /// The engine objects with a request waiting for its answer.
    public var waitingClients: Set<Int> { Set(routes.values.map(\.client)) }

    /// The messages `client`'s session asked for, renumbered for the helper. A cancellation of a
    /// request that has no route (answered, or already forgotten) is dropped.
    public mutating func outgoing(_ messages: [CloudRequestMessage], from client: Int) -> [CloudRequestMessage] {
        var out: [CloudRequestMessage] = []
        for message in messages {
            switch message {
            case .check(var request):
                let global = nextGlobalID
                nextGlobalID += 1
                routes[global] = Route(client: client, local: request.id)
                lastRequester = client
                request.id = global
                out.append(.check(request))
            case .cancel(let local):
                guard let global = routes.first(where: { $0.value.client == client && $0.value.local == local })?.key
                else { continue }
                routes[global] = nil
                out.append(.cancel(id: global))
            case .shutdown:
                out.append(.shutdown)
            }
        }
        return out
    }

    /// One line from the helper: where it goes. A reply's route is used up.
    public mutating func incoming(_ line: String) -> Delivery {
        guard let reply = CloudReply.parse(line) else { return .ignored }
        return incoming(reply)
    }

    /// One parsed message from the helper: where it goes. A reply's route is used up.
    public mutating func incoming(_ message: CloudReply) -> Delivery {
        if message.type == "status" {
            return .accountStatus(message, client: message.id.flatMap { routes[$0]?.client } ?? lastRequester)
        }
        guard message.type != "hello", let global = message.id, let route = routes.removeValue(forKey: global) else {
            return .ignored
        }
        var reply = message
        reply.id = route.local
        return .reply(reply, client: route.client)
    }

    /// Forgets the requests of one engine object (it is gone, or its helper could not be reached).
    public mutating func forget(client: Int) {
        routes = routes.filter { $0.value.client != client }
    }

    /// Forgets every request (the helper is gone or shutting down); returns who was waiting.
    @discardableResult
    public mutating func forgetAll() -> Set<Int> {
        let waiting = waitingClients
        routes.removeAll()
        return waiting
    }
}
