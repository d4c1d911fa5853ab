import InklingCore
import InklingServerProtocol

/// One request as the HTTP library delivered it. `body` is complete unless `bodyTooLarge`.
public struct ServerRequest: Sendable {
    public var method: String
    public var path: String
    /// The `Authorization` header, if any.
    public var authorization: String?
    public var body: [UInt8]
    /// The body went over `ServerAPI.maximumBodyBytes` and was not kept.
    public var bodyTooLarge: Bool
    /// The client's address (for sign-in throttling only; never logged).
    public var address: String

    public init(method: String, path: String, authorization: String?, body: [UInt8], bodyTooLarge: Bool = false, address: String) {
        self.method = method
        self.path = path
        self.authorization = authorization
        self.body = body
        self.bodyTooLarge = bodyTooLarge
        self.address = address
    }
}

/// The answer to send.
public struct ServerResponse: Equatable, Sendable {
    public var status: Int
    public var headers: [[String]]
    public var body: [UInt8]

    public init(status: Int, headers: [[String]] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    static func json<T: Encodable>(_ status: Int, _ value: T, headers: [[String]] = []) -> ServerResponse {
        ServerResponse(status: status, headers: [["Content-Type", "application/json"]] + headers, body: ServerJSON.encode(value))
    }

    static func error(_ status: Int, _ code: String, retryAfter: Int64? = nil) -> ServerResponse {
        let retry = retryAfter.map { max(1, $0) }
        var headers: [[String]] = []
        if let retry { headers.append(["Retry-After", String(retry)]) }
        if status == 401 { headers.append(["WWW-Authenticate", "Bearer"]) }
        return json(status, ErrorBody(error: code, retryAfter: retry.map { Int($0) }), headers: headers)
    }
}

/// Content-free facts about one request for the log: which route, the status, sizes. Never the
/// token, the address, the user name or any text.
public struct RequestFacts: Equatable, Sendable {
    public var route: String
    public var status: Int
    public var scalars: Int?
    public var userID: Int64?
}

/// The HTTP API (`ServerAPI`) over the account service and the gateway.
public final class Router: Sendable {
    let accounts: AccountService
    let gateway: Gateway
    /// Sends one chat-completions body upstream from the calling worker thread.
    let post: @Sendable ([UInt8]) -> UpstreamOutcome

    public init(accounts: AccountService, gateway: Gateway, post: @escaping @Sendable ([UInt8]) -> UpstreamOutcome) {
        self.accounts = accounts
        self.gateway = gateway
        self.post = post
    }

    /// The answer to one request and what the log may say about it.
    public func handle(_ request: ServerRequest) -> (ServerResponse, RequestFacts) {
        var facts = RequestFacts(route: Self.routeName(request.path), status: 0)
        let response: ServerResponse
        do {
            response = try route(request, &facts)
        } catch {
            response = .error(500, ServerErrorCode.internalError)
        }
        facts.status = response.status
        return (response, facts)
    }

    static func routeName(_ path: String) -> String {
        [ServerAPI.devicesPath, ServerAPI.rotatePath, ServerAPI.currentDevicePath, ServerAPI.checkPath, ServerAPI.healthPath].contains(path) ? path : "other"
    }

    private func route(_ request: ServerRequest, _ facts: inout RequestFacts) throws(SQLError) -> ServerResponse {
        let allowed: [String]
        switch request.path {
        case ServerAPI.healthPath: allowed = ["GET", "HEAD"]
        case ServerAPI.devicesPath: allowed = ["POST", "DELETE"]
        case ServerAPI.rotatePath, ServerAPI.checkPath: allowed = ["POST"]
        case ServerAPI.currentDevicePath: allowed = ["DELETE"]
        default: return .error(404, ServerErrorCode.notFound)
        }
        guard allowed.contains(request.method) else {
            var response = ServerResponse.error(405, ServerErrorCode.methodNotAllowed)
            response.headers.append(["Allow", allowed.joined(separator: ", ")])
            return response
        }
        if request.bodyTooLarge { return .error(413, ServerErrorCode.tooLarge) }
        if request.path == ServerAPI.healthPath { return .json(200, HealthAnswer()) }

        if request.path == ServerAPI.devicesPath, request.method == "POST" {
            guard let body = ServerJSON.decode(DeviceCreateRequest.self, from: request.body),
                body.username.utf8.count <= 256, body.password.utf8.count <= 1024,
                Self.isValidDeviceName(body.deviceName)
            else { return .error(400, ServerErrorCode.badRequest) }
            switch try accounts.signIn(username: body.username, password: Array(body.password.utf8), deviceName: body.deviceName, address: request.address) {
            case let .issued(answer): return .json(201, answer)
            case .badCredentials: return .error(401, ServerErrorCode.unauthorized)
            case let .throttled(retryAfter): return .error(429, ServerErrorCode.tooManyLoginAttempts, retryAfter: retryAfter)
            case .tooManyDevices: return .error(429, ServerErrorCode.tooManyDevices)
            }
        }

        guard let principal = try accounts.authenticate(token: Self.bearerToken(request.authorization)) else {
            return .error(401, ServerErrorCode.unauthorized)
        }
        facts.userID = principal.userID
        switch (request.method, request.path) {
        case ("POST", ServerAPI.rotatePath):
            guard let answer = try accounts.rotate(principal) else { return .error(401, ServerErrorCode.unauthorized) }
            return .json(200, answer)
        case ("DELETE", ServerAPI.currentDevicePath):
            _ = try accounts.revokeDevice(userID: principal.userID, deviceID: principal.deviceID)
            return ServerResponse(status: 204)
        case ("DELETE", ServerAPI.devicesPath):
            try accounts.revokeAll(userID: principal.userID)
            return ServerResponse(status: 204)
        default:
            break
        }
        // POST /v1/check
        guard let check = ServerJSON.decode(CheckRequest.self, from: request.body), Self.isAcceptable(check) else {
            return .error(400, ServerErrorCode.badRequest)
        }
        let scalars = check.sentence.unicodeScalars.count
        facts.scalars = scalars
        if case let .limited(retryAfter) = try accounts.admitCheck(userID: principal.userID, deviceID: principal.deviceID, characters: scalars) {
            return .error(429, ServerErrorCode.rateLimited, retryAfter: retryAfter)
        }
        let rotateHeaders = principal.shouldRotate ? [[ServerAPI.rotateHeader, "1"]] : []
        switch gateway.check(check.cloudRequest(), post: post) {
        case let .answer(reply): return .json(200, CheckAnswer(reply), headers: rotateHeaders)
        case let .unavailable(retryAfter): return .error(503, ServerErrorCode.upstreamUnavailable, retryAfter: retryAfter)
        case .timeout: return .error(504, ServerErrorCode.upstreamTimeout)
        case .failed: return .error(502, ServerErrorCode.upstreamFailed)
        }
    }

    /// The token of an `Authorization: Bearer …` header.
    static func bearerToken(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1])
    }

    /// 1 to 64 visible characters.
    static func isValidDeviceName(_ name: String) -> Bool {
        (1...64).contains(name.unicodeScalars.count) && name.unicodeScalars.allSatisfy { CloudText.isVisible($0) || $0 == " " }
    }

    /// Within the sizes the helper itself sends.
    static func isAcceptable(_ check: CheckRequest) -> Bool {
        let scalars = check.sentence.unicodeScalars.count
        return (1...CloudProtocol.maximumSentenceScalars).contains(scalars)
            && (1...35).contains(check.language.utf8.count) && check.language.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
            && check.flags.count <= 64
            && check.flags.allSatisfy { $0.start >= 0 && $0.end <= scalars && $0.start < $0.end && $0.replacements.count <= 16 }
    }
}
