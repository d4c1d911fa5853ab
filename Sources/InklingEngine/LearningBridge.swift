import CIBus
import Dispatch
import InklingCore
import InklingStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Persists learning: the user store is read off the main thread at start (issue 18: with the
/// store at its cap, reading it took longer than the whole start's budget), and its learned
/// model joins the shared predictor's when it is ready — until then suggestions come from the
/// pack alone, and what is typed is learned into the predictor's model, merged into the store's
/// when it arrives (`UserModel.adoptStored`). Every second the model's changes are handed to
/// the store's background writer (which writes on its own queue, never on the main thread); at
/// exit (a termination signal, see `TerminationSignals`, or the bus going away) the rest is
/// flushed.
@MainActor
enum LearningBridge {
    private static var writer: UserStoreWriter?
    private static var stopped = false
    /// The store being read at start (nil once it was taken, or never started).
    private static var reading: StoreReading?

    /// What reading the store gave, handed from the reading thread to the main thread.
    final class StoreReading: Sendable {
        struct Read {
            var writer: UserStoreWriter
            var model: UserModel
            /// Where a damaged store was moved, and what was wrong with it.
            var movedAside: (path: String, detail: String)?
        }
        let path: String
        private let outcome = Mutex<Result<Read, UserStoreError>?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(path: String) { self.path = path }

        /// On the reading thread: opens the store (a damaged one is moved aside and a fresh one
        /// started) and builds the learned model from it.
        func read() {
            let result: Result<Read, UserStoreError>
            do {
                let store = try UserStore.open(path: path)
                let movedAside = store.movedAsideCorruptFile.map { ($0, store.corruptionDetail ?? "") }
                let snapshot = try store.snapshot()
                var model = UserModel()
                model.load(snapshot.entries)
                _ = model.takeChanges()
                let writer = UserStoreWriter(store: store, generation: snapshot.generation)
                result = .success(Read(writer: writer, model: model, movedAside: movedAside))
            } catch let error as UserStoreError {
                result = .failure(error)
            } catch {
                result = .failure(.sqlite(operation: "reading the store", code: -1, message: "\(error)"))
            }
            outcome.withLock { $0 = result }
            done.signal()
        }

        /// The outcome, waiting up to `timeout` for it (nil: not ready).
        func take(waitingUpTo timeout: DispatchTime = .now()) -> Result<Read, UserStoreError>? {
            guard done.wait(timeout: timeout) == .success else { return nil }
            done.signal()  // for a later take, which finds nothing
            return outcome.withLock { value in
                defer { value = nil }
                return value
            }
        }
    }

    /// When `start()` ran (for the diagnostics' `learned_ready_us`).
    private static var startedMicros = 0

    static func start() {
        startedMicros = MemoryDiagnostics.now()
        let reading = StoreReading(path: UserStore.defaultPath())
        self.reading = reading
        PackLoader.predictor?.updateUserModel { $0.awaitStore() }
        readInBackground(reading)
        g_timeout_add_seconds(
            1,
            { _ in
                MainActor.assumeIsolated { LearningBridge.tick() }
                return 1  // G_SOURCE_CONTINUE
            }, nil)
    }

    /// Reads the store on a thread of its own, below the main thread's priority (a pool thread
    /// would keep that priority for later work), then hands the outcome to the main loop.
    /// Nonisolated: a callback formed on the main actor would trap on another thread (Swift's
    /// isolation check).
    nonisolated private static func readInBackground(_ reading: StoreReading) {
        let thread = g_thread_new(
            "inkling-store",
            { data in
                guard let data else { return nil }  // the box below is never nil
                let reading = Unmanaged<StoreReading>.fromOpaque(data).takeUnretainedValue()
                _ = inkling_lower_thread_priority()
                reading.read()
                // Reading went through every row: give the pages it freed back to the system.
                inkling_heap_trim()
                g_idle_add(
                    { data in
                        guard let data else { return 0 }  // G_SOURCE_REMOVE
                        let reading = Unmanaged<StoreReading>.fromOpaque(data).takeRetainedValue()
                        MainActor.assumeIsolated { LearningBridge.finishReading(reading) }
                        return 0  // G_SOURCE_REMOVE
                    }, data)
                return nil
            }, Unmanaged.passRetained(reading).toOpaque())
        g_thread_unref(thread)
    }

    /// The store has been read: its model joins the predictor's, and the writer takes over.
    private static func finishReading(_ reading: StoreReading, waitingUpTo timeout: DispatchTime = .now()) {
        guard reading === self.reading, let outcome = reading.take(waitingUpTo: timeout) else { return }
        self.reading = nil
        switch outcome {
        case .success(let read):
            if let moved = read.movedAside {
                log(
                    "learning: the user store \(reading.path) was damaged (\(moved.detail)); it was moved to \(moved.path) and learning starts afresh"
                )
            }
            writer = read.writer
            let entries = read.model.entryCount
            PackLoader.predictor?.updateUserModel { $0.adoptStored(read.model) }
            if EngineProcess.diagnostics != nil {
                log("startup learned_ready_us=\(MemoryDiagnostics.now() - startedMicros) learned_entries=\(entries)")
            }
        case .failure(let error):
            log(
                "learning: cannot use the user store \(reading.path): \(error); learned words last until the engine exits"
            )
            PackLoader.predictor?.updateUserModel { $0.adoptStored(UserModel()) }
        }
    }

    /// Takes the model's changes and queues them for the writer (never blocks on disk).
    static func tick() {
        guard let writer, let predictor = PackLoader.predictor, !stopped else { return }
        // Taking the changes leaves the predictor's answers (and their cache) untouched. They are
        // handed over before a reload replaces the model, which would otherwise drop them.
        let changes = predictor.takeLearnedChanges()
        if !changes.isEmpty { writer.submit(changes) }
        if let fresh = writer.takeReload() {  // the CLI or another engine wrote; includes `changes`
            predictor.replaceUserModel(with: fresh)
        }
    }

    /// A language switch: the old predictor's pending changes are queued (while the store is
    /// still being read, they stay in the model), and the learned model moves to the new
    /// predictor as it is (no copy), with the new predictor's limits.
    static func transfer(from old: Predictor, to new: Predictor) {
        if let writer {
            let changes = old.takeLearnedChanges()
            if !changes.isEmpty { writer.submit(changes) }
        }
        let capacity = new.userModel.capacity
        let halfLife = new.userModel.halfLife
        var moved = old.userModel
        old.replaceUserModel(with: [])
        moved.capacity = capacity
        moved.halfLife = halfLife
        new.updateUserModel { $0 = moved }
    }

    /// Writes everything learned so far and waits for it (at exit). A store still being read is
    /// waited for (a few seconds at most), so that what was typed meanwhile is not lost.
    static func shutdown() {
        guard !stopped else { return }
        if let reading { finishReading(reading, waitingUpTo: .now() + .seconds(5)) }
        tick()
        stopped = true
        guard let writer else { return }
        do {
            try writer.flushAndWait()
        } catch {
            log("learning: the last changes could not be written: \(error)")
        }
    }
}
