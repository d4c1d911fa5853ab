import CIBus
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// `ibus-engine-inkling --supervise ARGUMENTS…`: the component's `<exec>`. Runs the engine
/// (this binary with ARGUMENTS) as its child and restarts it when it dies by a signal.
///
/// ibus-daemon 1.5.27 restarts only its config, panel and emoji components (`--restart`), never
/// an engine: when the engine's connection closes, every input context drops it (a visible
/// commit-mode preedit is committed by the daemon) and keys reach applications raw until the user
/// selects the engine again. The supervisor is what the daemon started and stays its component
/// process; a fresh engine it starts takes the bus name again and, when no engine serves the
/// focused context any more, asks the daemon for Inkling as the global engine
/// (`EngineRecovery`), which is what the user would otherwise have to do.
///
/// Signal-safe by construction: the supervisor runs no handler at all. SIGCHLD and the
/// termination signals are blocked and taken synchronously with `sigtimedwait`; a termination
/// signal is forwarded to the engine (which flushes learning and exits 0), and the supervisor
/// ends with it. The decisions (restart at once, back off, give up in a crash loop) are
/// `EngineRestartPolicy`'s.
enum Supervisor {
    private static let terminationSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    static func run(engineArguments: [String]) -> Never {
        var waited = sigset_t()
        sigemptyset(&waited)
        for number in terminationSignals + [SIGCHLD] { sigaddset(&waited, number) }
        sigprocmask(SIG_BLOCK, &waited, nil)

        let executable = PackLocator.currentExecutablePath()
        var policy = EngineRestartPolicy()
        var stopRequested = false
        var engine: pid_t? = spawn(executable, engineArguments, recovering: false)
        var restartAt: Int64? = nil
        var restarts = 0
        if engine == nil { exit(1) }

        while true {
            if let due = restartAt, now() >= due {
                restartAt = nil
                restarts += 1
                engine = spawn(executable, engineArguments, recovering: true)
                if engine == nil { exit(1) }
            }
            var info = siginfo_t()
            let received: Int32
            if let due = restartAt {
                let wait = max(0, due - now())
                var timeout = timespec(tv_sec: Int(wait / 1000), tv_nsec: Int(wait % 1000) * 1_000_000)
                received = sigtimedwait(&waited, &info, &timeout)
            } else {
                received = sigwaitinfo(&waited, &info)
            }
            if received < 0 { continue }  // timeout (a restart is due) or EINTR

            if terminationSignals.contains(received) {
                stopRequested = true
                guard let engine else {
                    // Between a crash and its restart: nothing to stop, and no restart is wanted.
                    log(
                        "supervisor: signal \(received) while the engine was down after a crash; not restarting it",
                        priority: .warning)
                    exit(0)
                }
                kill(engine, received)
                continue
            }
            // SIGCHLD: reap every child; only the engine matters.
            while true {
                var status: Int32 = 0
                let pid = waitpid(-1, &status, WNOHANG)
                if pid <= 0 { break }
                guard pid == engine else { continue }
                engine = nil
                let ending = ending(status)
                switch policy.engineEnded(ending, stopRequested: stopRequested, now: now()) {
                case .exit(let code):
                    exit(code)
                case .restart(let delay):
                    if case .killedBySignal(let number) = ending {
                        log(
                            "supervisor: the engine was killed by signal \(number); restarting it"
                                + (delay > 0 ? " in \(delay) ms" : ""), priority: .warning)
                    }
                    restartAt = now() + delay
                case .giveUp(let code):
                    log(
                        "supervisor: the engine keeps crashing (\(restarts) restarts); giving up: select Inkling again to retry",
                        priority: .warning)
                    exit(code)
                }
            }
        }
    }

    private static func ending(_ status: Int32) -> EngineRestartPolicy.Ending {
        let signal = status & 0x7f
        if signal == 0 { return .exited(status: (status >> 8) & 0xff) }
        return .killedBySignal(signal)
    }

    private static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    /// Starts the engine with default signal handling and an empty signal mask; nil on failure.
    private static func spawn(_ executable: String, _ arguments: [String], recovering: Bool) -> pid_t? {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in terminationSignals + [SIGCHLD, SIGPIPE] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var inherited: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            inherited.append(String(cString: pointer))
            entry += 1
        }
        let environment = EngineEnvironment.forEngine(
            inheriting: inherited, supervisorProcessID: getpid(), recovering: recovering)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, nil, &attributes, argv, envp)
        guard result == 0 else {
            log("supervisor: cannot start the engine \(executable) (error \(result))", priority: .warning)
            return nil
        }
        return pid
    }
}

/// The engine's side of supervision.
@MainActor
enum EngineRecovery {
    nonisolated static let supervisorVariable = EngineEnvironment.supervisorVariable
    nonisolated static let recoveringVariable = EngineEnvironment.recoveringVariable

    /// Whether this engine replaces one that crashed.
    private(set) static var recovering = false

    /// Reads (and removes, so the cloud helper does not inherit them) the supervisor's variables;
    /// a supervised engine ends when its supervisor does.
    static func adoptSupervisor() {
        defer {
            unsetenv(supervisorVariable)
            unsetenv(recoveringVariable)
        }
        recovering = getenv(recoveringVariable).map { String(cString: $0) == "1" } ?? false
        guard let value = getenv(supervisorVariable), let supervisor = pid_t(String(cString: value)) else { return }
        if inkling_end_with_parent() != 0 { log("cannot follow the supervisor's end") }
        // The supervisor may have died before the line above: then there is nobody to serve.
        if getppid() != supervisor { exit(0) }
    }

    /// After a crash: when no engine serves the focused input context (the daemon dropped the dead
    /// one), asks the daemon for Inkling again, as the user would have to. Another engine that
    /// the user chose meanwhile is left alone.
    static func reattachIfOrphaned(_ bus: UnsafeMutablePointer<IBusBus>) {
        guard recovering else { return }
        if let current = ibus_bus_get_global_engine(bus) {
            g_object_unref(current)
            return
        }
        let ready: GAsyncReadyCallback = { source, result, _ in
            guard let source else { return }
            var error: UnsafeMutablePointer<GError>? = nil
            let bus = UnsafeMutableRawPointer(source).assumingMemoryBound(to: IBusBus.self)
            if ibus_bus_set_global_engine_async_finish(bus, result, &error) == 0 {
                if error != nil { g_error_free(error) }
                log("after a restart: the daemon refused Inkling as the global engine")
            } else {
                log("after a restart: Inkling serves the focused input context again")
            }
        }
        // Asynchronous: the daemon answers only after it created an engine object here.
        ibus_bus_set_global_engine_async(bus, Component.engineName, -1, nil, ready, nil)
    }
}
