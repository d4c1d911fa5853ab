import Dispatch
import InklingCore
import Synchronization

/// Persists the engine's learning off the key path: the main thread hands over batches of
/// `UserModel.takeChanges()` and returns at once; a serial dispatch queue (its own thread, not the
/// main queue, so it runs under `ibus_main()` too) writes them to the `UserStore`, at most once
/// per `interval`, each flush one transaction.
///
/// Intended use in the engine (all calls on the main thread, from a 1 s `g_timeout_add`):
///
///     // start-up
///     let (writer, entries) = try UserStoreWriter.open(path: UserStore.defaultPath())
///     predictor.updateUserModel { $0.load(entries) }
///     // every second: hand over the changes first, then take a reload (the reload includes
///     // them; taken the other way round, the model's untaken changes would be lost)
///     var changes: [(context: String, key: String, entry: LearnedEntry?)] = []
///     predictor.updateUserModel { changes = $0.takeChanges() }
///     writer.submit(changes)                           // never blocks on disk
///     if let fresh = writer.takeReload() {            // another process wrote the store
///         predictor.updateUserModel { $0 = UserModel(); $0.load(fresh) }
///     }
///     // at exit (disable / SIGTERM): the same submit, then
///     try writer.flushAndWait()
///
/// Submissions are coalesced by (context, key): the latest state of an entry wins. Each change
/// remembers the store generation its model was loaded at. When another process wrote the store
/// meanwhile (a second engine, `inkling learn`, `learned import`), the writer's changes are still
/// written, merged with what is there (`UserStore.reconcile`: the larger count wins), except those
/// whose words a later forget or wipe removed (`RemovalLog`); then the writer reads the store
/// afresh and offers it through `takeReload()`, with the changes still pending laid over it. So
/// two writers lose no word, and a forget or wipe always wins over older changes. A failed write
/// (disk full, the store busy beyond its timeout) keeps its batch and is retried after
/// `interval`; `lastError` tells. Nothing here logs: errors name files and SQLite's reasons,
/// never a word.
public final class UserStoreWriter: Sendable {
    /// Reported after each COMMIT (on the writer's queue).
    public struct Commit: Sendable {
        /// Every submission numbered up to this one is now on disk.
        public var through: Int
        /// Entries written (upserted or deleted) by this transaction.
        public var entries: Int
        /// The store's generation after it.
        public var generation: Int64
        /// When the flush began: flushes begin at most once per interval (a slow transaction
        /// makes the gap between two ends shorter than that).
        public var started: ContinuousClock.Instant
    }

    private struct EntryID: Hashable {
        var context: String
        var key: String
    }
    private struct Change {
        var entry: LearnedEntry?
        var base: Int64
    }

    private struct State {
        var pending: [EntryID: Change] = [:]
        var pendingThrough = 0
        var submitted = 0
        var scheduled = false
        var lastFlush: ContinuousClock.Instant?
        /// The store generation the caller's model was loaded at (or last written at by us).
        var modelGeneration: Int64
        var reload: (entries: [LearnedEntry], generation: Int64, removals: RemovalLog)?
        var lastError: UserStoreError?
    }

    /// The connection, used only on `queue`.
    private final class Connection: @unchecked Sendable {
        let store: UserStore
        init(_ store: UserStore) { self.store = store }
    }

    private let state: Mutex<State>
    private let queue = DispatchQueue(label: "inkling.user-store-writer", qos: .utility)
    private let connection: Connection
    private let interval: Duration
    private let onCommit: (@Sendable (Commit) -> Void)?

    /// Takes over `store` (use it no more elsewhere). `generation` is the one the caller's model
    /// was loaded at (`UserStore.snapshot()`).
    public init(
        store: sending UserStore, generation: Int64, interval: Duration = .seconds(1),
        onCommit: (@Sendable (Commit) -> Void)? = nil
    ) {
        connection = Connection(store)
        state = Mutex(State(modelGeneration: generation))
        self.interval = interval
        self.onCommit = onCommit
    }

    /// Opens the store at `path` and reads it: the entries to load into the model, and a writer
    /// that persists the model's changes from then on.
    public static func open(path: String, interval: Duration = .seconds(1)) throws -> (
        writer: UserStoreWriter, entries: [LearnedEntry]
    ) {
        let store = try UserStore.open(path: path)
        let snapshot = try store.snapshot()
        return (UserStoreWriter(store: store, generation: snapshot.generation, interval: interval), snapshot.entries)
    }

    /// Queues a batch of changes (nil entry: removed) and returns its number without waiting.
    @discardableResult
    public func submit(_ changes: [(context: String, key: String, entry: LearnedEntry?)]) -> Int {
        let (number, delay) = state.withLock { state -> (Int, Duration?) in
            guard !changes.isEmpty else { return (state.submitted, nil) }
            state.submitted += 1
            for change in changes {
                state.pending[EntryID(context: change.context, key: change.key)] = Change(
                    entry: change.entry, base: state.modelGeneration)
            }
            state.pendingThrough = state.submitted
            guard !state.scheduled else { return (state.submitted, nil) }
            state.scheduled = true
            let sinceLast = state.lastFlush.map { $0.duration(to: .now) } ?? interval
            return (state.submitted, sinceLast >= interval ? .zero : interval - sinceLast)
        }
        if let delay { schedule(after: delay) }
        return number
    }

    /// The store's current entries when another process changed it, with this writer's pending
    /// changes laid over them (those a forget or wipe removed left out); the caller replaces its
    /// model with them (see the type's example). Nil when nothing happened.
    public func takeReload() -> [LearnedEntry]? {
        state.withLock { state in
            guard let reload = state.reload else { return nil }
            state.reload = nil
            state.modelGeneration = reload.generation
            var entries: [EntryID: LearnedEntry] = [:]
            entries.reserveCapacity(reload.entries.count)
            for entry in reload.entries { entries[EntryID(context: entry.context, key: entry.key)] = entry }
            for (id, change) in state.pending {
                guard reload.removals.allows(context: id.context, key: id.key, base: change.base) else {
                    state.pending[id] = nil
                    continue
                }
                if let ours = change.entry {
                    entries[id] = LearnedMerge.merged(stored: entries[id], ours: ours)
                } else {
                    entries[id] = nil
                }
            }
            return Array(entries.values)
        }
    }

    /// Writes everything submitted so far now and waits for it (call at exit). Throws the write's
    /// error if it failed (the batch then stays queued).
    public func flushAndWait() throws {
        let failure: UserStoreError? = queue.sync {
            flush()
            return state.withLock { $0.pending.isEmpty ? nil : $0.lastError }
        }
        if let failure { throw failure }
    }

    /// The last write's error (nil after a successful write).
    public var lastError: UserStoreError? { state.withLock { $0.lastError } }

    /// Entries waiting to be written.
    public var pendingCount: Int { state.withLock { $0.pending.count } }

    private func schedule(after delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { self.flush() }
    }

    /// On `queue` only.
    private func flush() {
        let work = state.withLock {
            state -> (batch: [EntryID: Change], through: Int, model: Int64, started: ContinuousClock.Instant)? in
            state.scheduled = false
            guard !state.pending.isEmpty else { return nil }
            let batch = state.pending
            state.pending = [:]
            let started = ContinuousClock.now
            state.lastFlush = started
            return (batch, state.pendingThrough, state.modelGeneration, started)
        }
        guard let work else { return }
        let store = connection.store
        do {
            let changes = work.batch.map {
                UserStore.PendingChange(
                    context: $0.key.context, key: $0.key.key, entry: $0.value.entry, base: $0.value.base)
            }
            let outcome = try store.reconcile(changes, modelGeneration: work.model)
            // Someone else wrote since the model was loaded: offer the store's state (read after
            // our write, so it holds our changes too) for the caller to take.
            // (If that read fails, the next flush finds the model still behind and tries again.)
            let fresh = outcome.othersWrote ? try? store.snapshotWithRemovals() : nil
            state.withLock { state in
                if let fresh {
                    state.reload = fresh
                } else if !outcome.othersWrote, state.modelGeneration == work.model, state.reload == nil {
                    // Only our own write since the model was loaded: the model still matches the store.
                    state.modelGeneration = outcome.generation
                }
                state.lastError = nil
            }
            onCommit?(
                Commit(
                    through: work.through, entries: changes.count, generation: outcome.generation, started: work.started
                ))
        } catch {
            let retry = state.withLock { state -> Bool in
                state.lastError =
                    error as? UserStoreError ?? .sqlite(operation: "writing", code: -1, message: "\(error)")
                for (id, change) in work.batch where state.pending[id] == nil { state.pending[id] = change }
                guard !state.scheduled else { return false }
                state.scheduled = true
                return true
            }
            if retry { schedule(after: interval) }
        }
    }
}
