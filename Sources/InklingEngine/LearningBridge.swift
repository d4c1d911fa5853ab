import CIBus
import InklingCore
import InklingStore

#if canImport(Glibc)
    import Glibc
#endif

/// Persists learning: the user store is read once at start (before the first key) into the
/// shared predictor's model; every second the model's changes are handed to the store's
/// background writer (which writes on its own queue, never on the main thread); at exit
/// (a termination signal, see `TerminationSignals`, or the bus going away) the rest is flushed.
@MainActor
enum LearningBridge {
    private static var writer: UserStoreWriter?
    private static var stopped = false

    static func start() {
        let path = UserStore.defaultPath()
        do {
            let (opened, entries) = try UserStoreWriter.open(path: path)
            writer = opened
            PackLoader.predictor?.updateUserModel { $0.load(entries) }
        } catch {
            log("learning: cannot use the user store \(path): \(error); learned words last until the engine exits")
        }
        g_timeout_add_seconds(
            1,
            { _ in
                MainActor.assumeIsolated { LearningBridge.tick() }
                return 1  // G_SOURCE_CONTINUE
            }, nil)
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

    /// A language switch: the old predictor's pending changes are queued, and the learned model
    /// moves to the new predictor.
    static func transfer(from old: Predictor, to new: Predictor) {
        let changes = old.takeLearnedChanges()
        if !changes.isEmpty { writer?.submit(changes) }
        new.replaceUserModel(with: old.userModel.allEntries)
        old.replaceUserModel(with: [])
    }

    /// Writes everything learned so far and waits for it (at exit).
    static func shutdown() {
        guard !stopped else { return }
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
