import CIBus
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// SIGTERM (logout, `ibus restart`, the daemon stopping), SIGINT and SIGHUP end the engine
/// cleanly: learning is flushed on the main loop, the main loop quits, the process exits 0.
///
/// The signals are received by dispatch sources on a private serial queue, not on the main
/// thread (the main dispatch queue does not run under `ibus_main()`). That is why this type is
/// deliberately *not* `@MainActor`: a closure formed in a `@MainActor` context is isolated to the
/// main actor, Swift 6 checks that isolation when the closure runs, and on a dispatch thread the
/// check traps (SIGILL, the crash this replaced). The handler below is nonisolated and `@Sendable`;
/// its only way back to main-actor code is a GLib idle source, which runs on the main loop.
enum TerminationSignals {
    static let numbers: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    private static let queue = DispatchQueue(label: "inkling.termination-signals")
    /// Kept alive for the life of the process (set once, on the main thread, before any signal).
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []
    /// Signals received so far; only touched by the handler, which runs serially on `queue`.
    nonisolated(unsafe) private static var received = 0

    /// Installs the handlers. After the first signal `onMainLoop` runs once on the main loop; a
    /// second signal (the main loop is stuck) ends the process at once.
    static func install(onMainLoop: @escaping GSourceFunc) {
        for number in numbers {
            signal(number, SIG_IGN)  // the dispatch source, not the default action, handles it
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler(handler: { @Sendable in received(onMainLoop: onMainLoop) })
            source.resume()
            sources.append(source)
        }
    }

    /// Runs on `queue` (never the main thread): touches nothing main-actor isolated.
    private static func received(onMainLoop: GSourceFunc) {
        received += 1
        if received > 1 { _exit(0) }
        g_idle_add(onMainLoop, nil)  // thread-safe; wakes the main context
    }
}
