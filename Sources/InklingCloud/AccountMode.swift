import InklingAccount
import InklingCloudClient
import InklingCore
import InklingServerProtocol

/// The helper's account mode: `--endpoint` is an Inkling Server and the user's keyring holds a
/// device token for it (`inkling account login`). Checks go to `<endpoint>/v1/check` with
/// `Authorization: Bearer <token>` and nothing else that identifies the user (no model, no API
/// key); the server holds the provider key.
///
/// Rotation (see `TokenRotationPolicy`): when a check's answer carries `Inkling-Rotate-Token: 1`,
/// or three quarters of the token's lifetime have passed, the next check first calls
/// `POST /v1/devices/rotate` and stores the new token in the keyring at once, well inside the
/// server's grace period for the old one (a failed store is retried before every check; the new
/// token is used meanwhile).
///
/// A 401 first reads the keyring again (another helper may have rotated, or the user signed in
/// again) and retries once with a token found there; otherwise the helper stops asking: it tells
/// the engine once (`status` `sign-in-required`) and answers every check at once with the error
/// `sign-in required` until a new token turns up in the keyring (read at most every 10 s, and at
/// the next check after `inkling account login` rewrote the sign-in marker), when it says
/// `signed-in` and resumes.
///
/// Over a limit the server answers 429 with `Retry-After`: until then checks are answered at
/// once with the error `rate limited`, nothing is sent, and the circuit breaker is not involved
/// (the server is fine; this user has asked enough).
///
/// Used on the worker thread only. The token never reaches the engine or a log.
final class AccountMode {
    private(set) var gate: AccountGate
    let server: String
    private let clock: any MonotonicClock
    private let wall: any WallClock
    private let output: Output
    /// A rotated credential the keyring has not taken yet.
    private var unsaved: DeviceCredential?
    /// `SignInMarker`'s path, if there is a runtime directory.
    private let markerPath: String?

    /// What a check came to.
    enum CheckResult {
        /// The token was refused earlier: nothing was sent.
        case refused
        /// The server is over a limit for this user (429) and its `Retry-After` has not passed.
        case rateLimited
        case outcome(HTTPOutcome)
    }

    init(
        credential: DeviceCredential, clock: any MonotonicClock, wall: any WallClock, output: Output,
        markerPath: String? = nil
    ) {
        gate = AccountGate(credential: credential)
        self.markerPath = markerPath
        server = credential.server
        self.clock = clock
        self.wall = wall
        self.output = output
    }

    /// Account mode for `endpoint` when the keyring holds a token for it; nil otherwise.
    static func start(
        endpoint: String, clock: any MonotonicClock, wall: any WallClock, output: Output, markerPath: String? = nil
    ) -> AccountMode? {
        guard case .found(let credential) = AccountKeyring.lookup(server: endpoint) else { return nil }
        Log.note("account mode: using the device token from the keyring")
        return AccountMode(credential: credential, clock: clock, wall: wall, output: output, markerPath: markerPath)
    }

    private func tell(_ event: AccountEvent?, id: Int?) {
        guard let event else { return }
        Log.note(
            event == .signInRequired
                ? "account mode: the server refused the device token; sign in again"
                : "account mode: a new device token is in the keyring")
        output.send(CloudReply(type: "status", id: id, status: event.rawValue))
    }

    /// The keyring's record now, if any (a keyring that cannot be asked counts as none).
    private func keyringRecord() -> DeviceCredential? {
        if case .found(let found) = AccountKeyring.lookup(server: server) { return found }
        return nil
    }

    /// Sends one check (rotating first when due) within `timeoutMilliseconds`.
    func check(_ request: CloudCheckRequest, client: HTTPClient, timeoutMilliseconds: Int, cancel: CancelFlag)
        -> CheckResult
    {
        let started = clock.milliseconds()
        func remaining() -> Int { max(1, timeoutMilliseconds - Int(clock.milliseconds() - started)) }
        if let pending = unsaved, AccountKeyring.store(pending) == nil { unsaved = nil }
        // Stat only while paused: a check in normal operation touches no file.
        let marker = gate.signInRequired ? markerPath.flatMap { SignInMarker.stamp(path: $0) } : nil
        if gate.shouldLookAtKeyring(now: started, marker: marker) {
            gate.lookedAtKeyring(now: started, marker: marker)
            tell(gate.adopt(keyringRecord()).event, id: request.id)
        }
        switch gate.nextStep(now: wall.seconds()) {
        case .refuse:
            return .refused
        case .wait:
            return .rateLimited
        case .rotate:
            // At most half the time: the check itself must still fit.
            rotate(client: client, timeoutMilliseconds: max(1, timeoutMilliseconds / 2), cancel: cancel, id: request.id)
            if gate.signInRequired { return .refused }
        case .check:
            break
        }
        let body = ServerJSON.encode(CheckRequest(request))
        var outcome = client.post(
            body: body, bearer: gate.credential.token, timeoutMilliseconds: remaining(), cancel: cancel,
            url: server + ServerAPI.checkPath)
        if case .response(401, _) = outcome, gate.adopt(keyringRecord()).taken {
            // Another process rotated or the user signed in again: once more with that token.
            outcome = client.post(
                body: body, bearer: gate.credential.token, timeoutMilliseconds: remaining(), cancel: cancel,
                url: server + ServerAPI.checkPath)
        }
        if case .response(let status, _) = outcome {
            tell(
                gate.checkAnswered(
                    status: status, asksRotation: client.lastResponseAsksRotation,
                    retryAfter: client.lastResponseRetryAfter, now: wall.seconds()),
                id: request.id)
        }
        return .outcome(outcome)
    }

    /// Exchanges the token for a new one and stores that in the keyring at once.
    private func rotate(client: HTTPClient, timeoutMilliseconds: Int, cancel: CancelFlag, id: Int) {
        let outcome = client.post(
            body: [], bearer: gate.credential.token, timeoutMilliseconds: timeoutMilliseconds, cancel: cancel,
            url: server + ServerAPI.rotatePath)
        let now = wall.seconds()
        guard case .response(let status, let body) = outcome else {
            _ = gate.rotationFailed(status: nil, now: now)
            Log.note("account mode: token rotation failed (no answer); the current token stays in use")
            return
        }
        guard status == 200, let answer = ServerJSON.decode(DeviceRotateAnswer.self, from: body),
            DeviceCredential.isHeaderSafe(answer.token)
        else {
            if status == 401, gate.adopt(keyringRecord()).taken { return }
            tell(
                gate.rotationFailed(
                    status: status == 200 ? nil : status, now: now, retryAfter: client.lastResponseRetryAfter),
                id: id)
            if status != 401 {
                Log.note("account mode: token rotation failed; the current token stays in use", ("status", status))
            }
            return
        }
        let fresh = gate.rotated(answer, now: now)
        if AccountKeyring.store(fresh) == nil {
            unsaved = nil
            Log.note("account mode: rotated the device token and stored the new one in the keyring")
        } else {
            unsaved = fresh
            Log.note(
                "account mode: rotated the device token but the keyring did not take it; retrying before each check")
        }
    }
}
