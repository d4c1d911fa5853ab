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
///     // every second
///     if let fresh = writer.takeReload() {            // the CLI forgot, wiped, imported or learned
///         predictor.updateUserModel { $0 = UserModel(); $0.load(fresh) }
///     }
///     var changes: [(context: String, key: String, entry: LearnedEntry?)] = []
///     predictor.updateUserModel { changes = $0.takeChanges() }
///     writer.submit(changes)                           // never blocks on disk
///     // at exit (disable / SIGTERM): the same submit, then
///     try writer.flushAndWait()
///
/// Submissions are coalesced by (context, key): the latest state of an entry wins. If the store
/// changed under the writer (another process wrote: its `generation` moved), the pending batch is
/// not written over it; the writer reads the store afresh and waits until the engine takes that
/// through `takeReload()`; batches submitted meanwhile describe the old model and are dropped
/// (at most a second or two of learning). A failed write (disk full, the store busy beyond its
/// timeout) keeps its batch and is retried after `interval`; `lastError` tells. Nothing here
/// logs: errors name files and SQLite's reasons, never a word.
public final class UserStoreWriter: Sendable {
    /// Reported after each COMMIT (on the writer's queue).
    public struct Commit: Sendable {
        /// Every submission numbered up to this one is now on disk.
        public var through: Int
        /// Entries written (upserted or deleted) by this transaction.
        public var entries: Int
        /// The store's generation after it.
        public var generation: Int64
    }

    private struct EntryID: Hashable { var context: String; var key: String }
    private struct Change { var entry: LearnedEntry? }

    private struct State {
        var pending: [EntryID: Change] = [:]
        var pendingThrough = 0
        var submitted = 0
        var scheduled = false
        var lastFlush: ContinuousClock.Instant?
        var expectedGeneration: Int64
        var awaitingReload = false
        var reload: (entries: [LearnedEntry], generation: Int64)?
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
    public init(store: sending UserStore, generation: Int64, interval: Duration = .seconds(1), onCommit: (@Sendable (Commit) -> Void)? = nil) {
        connection = Connection(store)
        state = Mutex(State(expectedGeneration: generation))
        self.interval = interval
        self.onCommit = onCommit
    }

    /// Opens the store at `path` and reads it: the entries to load into the model, and a writer
    /// that persists the model's changes from then on.
    public static func open(path: String, interval: Duration = .seconds(1)) throws -> (writer: UserStoreWriter, entries: [LearnedEntry]) {
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
            // Describes the model from before a pending reload: the reload replaces it.
            if state.awaitingReload { return (state.submitted, nil) }
            for change in changes { state.pending[EntryID(context: change.context, key: change.key)] = Change(entry: change.entry) }
            state.pendingThrough = state.submitted
            guard !state.scheduled else { return (state.submitted, nil) }
            state.scheduled = true
            let sinceLast = state.lastFlush.map { $0.duration(to: .now) } ?? interval
            return (state.submitted, sinceLast >= interval ? .zero : interval - sinceLast)
        }
        if let delay { schedule(after: delay) }
        return number
    }

    /// The store's current entries when another process changed it; the caller replaces its
    /// model with them (see the type's example). Nil when nothing happened.
    public func takeReload() -> [LearnedEntry]? {
        state.withLock { state in
            guard state.awaitingReload, let reload = state.reload else { return nil }
            state.reload = nil
            state.awaitingReload = false
            state.expectedGeneration = reload.generation
            return reload.entries
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
        let work = state.withLock { state -> (batch: [EntryID: Change], through: Int, expected: Int64)? in
            state.scheduled = false
            guard !state.pending.isEmpty, !state.awaitingReload else { return nil }
            let batch = state.pending
            state.pending = [:]
            state.lastFlush = .now
            return (batch, state.pendingThrough, state.expectedGeneration)
        }
        guard let work else { return }
        let store = connection.store
        do {
            let changes = work.batch.map { (context: $0.key.context, key: $0.key.key, entry: $0.value.entry) }
            switch try store.apply(changes, ifGeneration: work.expected) {
            case .applied(let generation):
                state.withLock { state in
                    state.expectedGeneration = generation
                    state.lastError = nil
                }
                onCommit?(Commit(through: work.through, entries: changes.count, generation: generation))
            case .stale:
                let snapshot = try store.snapshot()
                state.withLock { state in
                    state.awaitingReload = true
                    state.reload = snapshot
                    state.pending = [:]
                    state.lastError = nil
                }
            }
        } catch {
            let retry = state.withLock { state -> Bool in
                state.lastError = error as? UserStoreError ?? .sqlite(operation: "writing", code: -1, message: "\(error)")
                for (id, change) in work.batch where state.pending[id] == nil { state.pending[id] = change }
                guard !state.scheduled else { return false }
                state.scheduled = true
                return true
            }
            if retry { schedule(after: interval) }
        }
    }
}
