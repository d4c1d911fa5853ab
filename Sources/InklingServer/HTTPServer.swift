import CMicroHTTPD
import Glibc
import InklingCloudClient
import InklingServerCore
import InklingServerProtocol
import Synchronization

/// One request being received: the body so far (bounded), kept between libmicrohttpd's calls.
/// `answer` is written by an upstream worker while the connection is suspended and read after
/// `MHD_resume_connection` (the library's lock orders the two), hence `@unchecked Sendable`.
private final class PendingRequest: @unchecked Sendable {
    var body: [UInt8] = []
    var tooLarge = false
    /// Bytes received past the limit (discarded); far past it the connection is cut.
    var discarded = 0
    /// When the complete request was handed to the router (monotonic milliseconds).
    var started: UInt64 = 0
    /// The answer of a check run by an upstream worker, for the call after the resume.
    var answer: (ServerResponse, RequestFacts)?
    /// A check handed to the upstream workers (not answered on the HTTP thread).
    var handedOver = false
}

/// A suspended connection, handed to an upstream worker (only resumed from there).
private struct SuspendedConnection: @unchecked Sendable {
    let connection: OpaquePointer
}

/// One open connection, for the request deadline: a request that takes longer than
/// `requestTimeoutSeconds` to arrive (headers dribbled a byte at a time keep the library's
/// inactivity timeout from firing) has its socket shut down by the reaper.
/// Its mutable fields are read and written only under `HTTPServer.connections`'s lock.
private final class OpenConnection: @unchecked Sendable {
    let fd: Int32
    /// When the current request began to arrive (the connection opened or the last answer went out).
    var since: UInt64
    /// A request is being answered (upstream call under way): never cut then.
    var answering = false
    var cut = false

    init(fd: Int32, since: UInt64) {
        self.fd = fd
        self.since = since
    }
}

/// libmicrohttpd's daemon (its own thread pool, connection limit, inactivity timeout and
/// per-connection memory limit, which bounds the request headers) in front of the `Router`.
/// Checks, which wait on the upstream, run on `UpstreamWorkers` with their connection suspended,
/// so a slow upstream never holds the library's threads — except, while the upstream is fast,
/// in at most half of them for one call each (`CheckPlacement`: the hand-over costs more than
/// such a call).
final class HTTPServer: @unchecked Sendable {
    let router: Router
    let config: ServerConfig
    private let workers: UpstreamWorkers
    private let placement: CheckPlacement
    private var daemon: OpaquePointer?
    private let connections = Mutex<[Int32: OpenConnection]>([:])
    private let clock = SystemClock()
    private let requestsServed = Atomic<Int>(0)

    init(router: Router, config: ServerConfig, placement: CheckPlacement) {
        self.router = router
        self.config = config
        self.placement = placement
        workers = UpstreamWorkers(count: config.upstreamThreads)
    }

    enum StartError: Error {
        case address
        case tls(String)
        case daemon
    }

    /// Starts listening; returns the port (useful with port 0).
    func start() throws(StartError) -> Int {
        var tlsKey: String?
        var tlsCertificate: String?
        if let keyFile = config.tlsKeyFile, let certificateFile = config.tlsCertificateFile {
            do {
                tlsKey = try SecretFile.read(keyFile, firstLineOnly: false)
                tlsCertificate = try SecretFile.read(certificateFile, firstLineOnly: false)
            } catch {
                throw .tls("cannot read the TLS key or certificate")
            }
        }
        var storage = sockaddr_storage()
        let ipv6 = config.listenHost.contains(":")
        let parsed: Bool = withUnsafeMutableBytes(of: &storage) { raw in
            guard let base = raw.baseAddress else { return false }
            if ipv6 {
                let address = base.assumingMemoryBound(to: sockaddr_in6.self)
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                address.pointee.sin6_port = UInt16(config.listenPort).bigEndian
                return inet_pton(AF_INET6, config.listenHost, &address.pointee.sin6_addr) == 1
            }
            let address = base.assumingMemoryBound(to: sockaddr_in.self)
            address.pointee.sin_family = sa_family_t(AF_INET)
            address.pointee.sin_port = UInt16(config.listenPort).bigEndian
            let host = config.listenHost == "localhost" ? "127.0.0.1" : config.listenHost
            return inet_pton(AF_INET, host, &address.pointee.sin_addr) == 1
        }
        guard parsed else { throw .address }
        let context = Unmanaged.passUnretained(self).toOpaque()
        daemon = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                inkling_mhd_start(
                    address, ipv6 ? 1 : 0, UInt32(config.threads), UInt32(config.maximumConnections),
                    UInt32(config.idleTimeoutSeconds), 32 * 1024, tlsKey, tlsCertificate,
                    accessHandler, context, completedHandler, context, connectionHandler, context)
            }
        }
        guard let daemon else { throw .daemon }
        startReaper()
        return Int(inkling_mhd_port(daemon))
    }

    // MARK: Request deadline

    private func startReaper() {
        let limit = UInt64(config.requestTimeoutSeconds) * 1000
        let thread = Thread { [self] in
            while true {
                usleep(250_000)
                let now = clock.milliseconds()
                connections.withLock { open in
                    // Under the lock: the library reports a connection closed (and removes it
                    // here) before it closes the descriptor, so `fd` is still this connection's.
                    for connection in open.values
                    where !connection.answering && !connection.cut && now - connection.since > limit {
                        connection.cut = true
                        shutdown(connection.fd, Int32(SHUT_RDWR))
                    }
                }
            }
        }
        thread.start()
    }

    fileprivate func connectionOpened(
        _ connection: OpaquePointer, _ context: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) {
        let fd = inkling_mhd_connection_fd(connection)
        guard fd >= 0 else { return }
        let entry = OpenConnection(fd: fd, since: clock.milliseconds())
        context.pointee = Unmanaged.passRetained(entry).toOpaque()
        connections.withLock { $0[fd] = entry }
    }

    fileprivate func connectionClosed(_ context: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        guard let raw = context.pointee else { return }
        let entry = Unmanaged<OpenConnection>.fromOpaque(raw)
        connections.withLock { open in
            if open[entry.takeUnretainedValue().fd] === entry.takeUnretainedValue() {
                open[entry.takeUnretainedValue().fd] = nil
            }
        }
        entry.release()
        context.pointee = nil
    }

    private func openConnection(_ connection: OpaquePointer) -> OpenConnection? {
        guard let raw = inkling_mhd_socket_context(connection) else { return nil }
        return Unmanaged<OpenConnection>.fromOpaque(raw).takeUnretainedValue()
    }

    // MARK: Requests

    fileprivate func access(
        _ connection: OpaquePointer, _ url: UnsafePointer<CChar>, _ method: UnsafePointer<CChar>,
        _ uploadData: UnsafePointer<CChar>?, _ uploadSize: UnsafeMutablePointer<Int>,
        _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let raw = requestContext.pointee else {
            // First call: the headers are in.
            let pending = PendingRequest()
            requestContext.pointee = Unmanaged.passRetained(pending).toOpaque()
            if let length = header(connection, "Content-Length"), let value = Int(length),
                value > ServerAPI.maximumBodyBytes
            {
                // Answered at once, the body unread; the library then closes the connection.
                pending.tooLarge = true
                let (response, _) = router.handle(
                    ServerRequest(
                        method: String(cString: method), path: String(cString: url), authorization: nil, body: [],
                        bodyTooLarge: true, address: ""))
                return send(response, on: connection, close: true)
            }
            return MHD_Result.YES
        }
        let pending = Unmanaged<PendingRequest>.fromOpaque(raw).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            let count = uploadSize.pointee
            if !pending.tooLarge, pending.body.count + count <= ServerAPI.maximumBodyBytes, let uploadData {
                pending.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: count))
            } else {
                pending.tooLarge = true
                pending.body = []
                pending.discarded += count
                // Far past the limit: stop reading and close.
                if pending.discarded > 4 * ServerAPI.maximumBodyBytes { return MHD_Result.NO }
            }
            uploadSize.pointee = 0
            return MHD_Result.YES
        }
        let open = openConnection(connection)
        if let (response, facts) = pending.answer {
            // Called again after the resume: the upstream worker's answer.
            return finish(response, facts, pending: pending, open: open, on: connection)
        }
        connections.withLock { _ in open?.answering = true }
        var address = [CChar](repeating: 0, count: 64)
        inkling_mhd_client_address(connection, &address, socklen_t(address.count))
        let request = ServerRequest(
            method: String(cString: method), path: String(cString: url),
            authorization: header(connection, "Authorization"),
            body: pending.body, bodyTooLarge: pending.tooLarge,
            address: String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        pending.started = clock.milliseconds()
        let isCheck = request.method == "POST" && request.path == ServerAPI.checkPath && !pending.tooLarge
        let inPlace = isCheck && placement.answerInPlace(now: pending.started)
        if isCheck && !inPlace {
            pending.handedOver = true
            // Out of this thread while the upstream answers: the library calls `access` again
            // after the resume, and the answer goes out then. A suspended connection has no
            // inactivity timeout; the upstream's timeout bounds the wait.
            MHD_suspend_connection(connection)
            let suspended = SuspendedConnection(connection: connection)
            workers.submit { [router] in
                pending.answer = router.handle(request)
                MHD_resume_connection(suspended.connection)
            }
            return MHD_Result.YES
        }
        let (response, facts) = router.handle(request)
        if inPlace { placement.inlineFinished() }
        return finish(response, facts, pending: pending, open: open, on: connection)
    }

    /// Sends the answer and notes the request as done (deadline, log).
    private func finish(
        _ response: ServerResponse, _ facts: RequestFacts, pending: PendingRequest, open: OpenConnection?,
        on connection: OpaquePointer
    ) -> MHD_Result {
        let result = send(response, on: connection, close: pending.tooLarge)
        connections.withLock { _ in
            open?.answering = false
            open?.since = clock.milliseconds()
        }
        if config.logRequests {
            var line =
                "request route=\(facts.route) status=\(facts.status) ms=\(clock.milliseconds() - pending.started)"
            if let scalars = facts.scalars { line += " scalars=\(scalars)" }
            if facts.route == ServerAPI.checkPath { line += pending.handedOver ? " on=pool" : " on=http" }
            ServerLog.write(line)
        }
        return result
    }

    fileprivate func completed(_ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        guard let requestContext, let raw = requestContext.pointee else { return }
        Unmanaged<PendingRequest>.fromOpaque(raw).release()
        requestContext.pointee = nil
    }

    private func header(_ connection: OpaquePointer, _ name: String) -> String? {
        guard let value = MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, name) else { return nil }
        return String(cString: value)
    }

    private func send(_ response: ServerResponse, on connection: OpaquePointer, close: Bool) -> MHD_Result {
        let body = response.body
        let handle = body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
        }
        guard let handle else { return MHD_Result.NO }
        defer { MHD_destroy_response(handle) }
        for header in response.headers where header.count == 2 {
            _ = MHD_add_response_header(handle, header[0], header[1])
        }
        _ = MHD_add_response_header(handle, "Cache-Control", "no-store")
        _ = MHD_add_response_header(handle, "X-Content-Type-Options", "nosniff")
        if close { _ = MHD_add_response_header(handle, "Connection", "close") }
        return MHD_queue_response(connection, UInt32(response.status), handle)
    }
}

private let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, _, uploadData, uploadSize, requestContext in
    guard let context, let connection, let url, let method, let uploadSize, let requestContext else {
        return MHD_Result.NO
    }
    return Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().access(
        connection, url, method, uploadData, uploadSize, requestContext)
}

private let completedHandler: MHD_RequestCompletedCallback = { context, _, requestContext, _ in
    guard let context else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().completed(requestContext)
}

private let connectionHandler: MHD_NotifyConnectionCallback = { context, connection, socketContext, event in
    guard let context, let connection, let socketContext else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    if event == MHD_ConnectionNotificationCode.CONNECTION_NOTIFY_STARTED {
        server.connectionOpened(connection, socketContext)
    } else {
        server.connectionClosed(socketContext)
    }
}

/// A plain POSIX thread running a closure (no Foundation in the server).
final class Thread {
    private let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }

    func start() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let thread = Unmanaged<Thread>.fromOpaque(raw).takeRetainedValue()
                thread.body()
                return nil
            }, box)
        pthread_detach(thread)
    }
}
