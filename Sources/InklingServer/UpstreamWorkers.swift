import Glibc
import Synchronization

/// The threads that wait on the upstream, so that the HTTP library's threads never do.
///
/// A `POST /v1/check` is handed over here once its body is in: the HTTP thread suspends the
/// connection (libmicrohttpd's `MHD_suspend_connection`) and goes on serving other connections;
/// a worker here runs the check (token, limits, upstream call) and resumes the connection with
/// the answer. Bounded: `count` threads; the queue holds at most one job per open connection,
/// so the connection limit (`max_connections`) bounds it.
/// (`@unchecked`: the semaphore is made for sharing between threads.)
final class UpstreamWorkers: @unchecked Sendable {
    private let queue = Mutex<[@Sendable () -> Void]>([])
    /// Counts the queued jobs (POSIX semaphore: no Foundation or Dispatch in the server).
    private let available: UnsafeMutablePointer<sem_t>

    init(count: Int) {
        available = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(available, 0, 0)
        for _ in 0..<max(1, count) {
            Thread { [self] in
                while true { self.next()() }
            }.start()
        }
    }

    /// Queues `job` for the next free worker.
    func submit(_ job: @escaping @Sendable () -> Void) {
        queue.withLock { $0.append(job) }
        sem_post(available)
    }

    private func next() -> @Sendable () -> Void {
        while sem_wait(available) != 0 {}  // EINTR
        return queue.withLock { $0.removeFirst() }
    }
}
