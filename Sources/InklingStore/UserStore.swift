import CSQLite
import FoundationEssentials
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Why the user store could not be used. Messages name files and SQLite's reasons, never a word.
public enum UserStoreError: Error, Equatable, CustomStringConvertible {
    /// The folder for the store could not be created.
    case cannotCreateDirectory(path: String, reason: String)
    /// The file could not be created or opened (permissions, a folder in the way, …).
    case cannotOpen(path: String, reason: String)
    /// The file is not a healthy SQLite database (`open` moves it aside unless told not to).
    case corrupt(path: String, detail: String)
    /// The store was written by a newer Inkling; it is left untouched.
    case newerSchema(path: String, found: Int32, supported: Int32)
    /// Another process held the store for longer than the busy timeout.
    case busy(operation: String)
    /// Any other SQLite failure.
    case sqlite(operation: String, code: Int32, message: String)

    public var description: String {
        switch self {
        case .cannotCreateDirectory(let path, let reason): "cannot create the folder \(path): \(reason)"
        case .cannotOpen(let path, let reason): "cannot open the user store \(path): \(reason)"
        case .corrupt(let path, let detail): "the user store \(path) is damaged (\(detail))"
        case .newerSchema(let path, let found, let supported):
            "the user store \(path) has schema version \(found), written by a newer Inkling; this one reads up to version \(supported). Update Inkling, or move the file away to start afresh."
        case .busy(let operation): "the user store is busy (another process holds it): \(operation)"
        case .sqlite(let operation, let code, let message):
            "user store: \(operation) failed: \(message) (SQLite \(code))"
        }
    }
}

/// The user's learned words on disk: one SQLite file shared by the engine and the CLI.
///
/// Layout: table `entries(context, key, display, count, last_used)` keyed by (context, key) — the
/// rows of `UserModel` — and `meta(name, value)` holding a `generation` that every committed write
/// increases, so a long-running writer (the engine) notices that someone else (the CLI: forget,
/// wipe, import, learn; another session's engine) changed the store; `reconcile` then merges its
/// changes instead of overwriting or dropping them. The removal log — `forgotten(tag, generation,
/// at)` with 16-bit word tags, and `meta` rows `wiped_at` and `forgotten_complete_since` — lets
/// a forget or wipe win over changes made before it (`RemovalLog`).
///
/// Besides the file and its `-wal`/`-shm`, the only files with learned words Inkling writes next
/// to it are damaged stores moved aside (`<path>.corrupt-*`, see `open`): `leftoverCopies(of:)`
/// finds them and `learned wipe` deletes them. Temporary data stays in memory (`temp_store`).
///
/// The file is private (mode 0600, also its `-wal` and `-shm` companions), in WAL mode so that
/// readers never block the writer and the CLI and the engine can use it at the same time (a
/// writer waits up to `busyTimeoutMilliseconds` for another).
///
/// A connection is not thread-safe: use one `UserStore` from one thread at a time (the engine's
/// `UserStoreWriter` owns its own). Opening it twice (two connections) is fine.
public final class UserStore {
    /// The schema this code writes; a file with a larger `user_version` is refused.
    public static let schemaVersion: Int32 = 1
    /// How long a statement waits for another connection's write lock.
    public static let busyTimeoutMilliseconds: Int32 = 5000

    /// The database file.
    public let path: String
    /// Where a damaged file found at `path` was moved by `open` (nil: none was).
    public private(set) var movedAsideCorruptFile: String?
    /// What was wrong with that file.
    public private(set) var corruptionDetail: String?

    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private var inTransaction = false

    /// The store's usual place: `$XDG_DATA_HOME/inkling/user.sqlite3`, else
    /// `~/.local/share/inkling/user.sqlite3` (XDG: a relative `XDG_DATA_HOME` is ignored).
    public static func defaultPath() -> String {
        if let data = getenv("XDG_DATA_HOME").map({ String(cString: $0) }), data.hasPrefix("/") {
            return data + "/inkling/user.sqlite3"
        }
        var home = getenv("HOME").map { String(cString: $0) } ?? ""
        if home.isEmpty, let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir { home = String(cString: dir) }
        return home + "/.local/share/inkling/user.sqlite3"
    }

    /// Opens (creating if needed) the store at `path`.
    ///
    /// A damaged file (not SQLite, or failing `PRAGMA quick_check`) is moved aside to
    /// `<path>.corrupt-<UTC timestamp>` (with its `-wal`) and a fresh store is started; the new
    /// store's `movedAsideCorruptFile` says where the old one went. With `recoverCorrupt: false`
    /// the damage is thrown as `UserStoreError.corrupt` instead. A store from a newer Inkling
    /// throws `.newerSchema` and is never touched.
    public static func open(path: String, recoverCorrupt: Bool = true) throws -> UserStore {
        do {
            return try UserStore(path: path)
        } catch UserStoreError.corrupt(_, let detail) where recoverCorrupt {
            let aside = try moveAside(path)
            let store = try UserStore(path: path)
            store.movedAsideCorruptFile = aside
            store.corruptionDetail = detail
            return store
        }
    }

    private init(path: String) throws {
        self.path = path
        db = try Self.connect(path)
    }

    deinit { close() }

    /// How long this connection's statements wait for another connection's lock (default
    /// `busyTimeoutMilliseconds`).
    public func setBusyTimeout(milliseconds: Int32) {
        if let db { sqlite3_busy_timeout(db, milliseconds) }
    }

    /// Closes the connection (also done when the store is released).
    public func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    // MARK: Opening

    private static func connect(_ path: String) throws -> OpaquePointer {
        try makeParentDirectory(of: path)
        try createPrivateFile(path)
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let db = handle else {
            let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "SQLite code \(status)"
            sqlite3_close_v2(handle)
            throw UserStoreError.cannotOpen(path: path, reason: reason)
        }
        do {
            try configure(db, path: path)
            return db
        } catch {
            sqlite3_close_v2(db)
            throw error
        }
    }

    private static func configure(_ db: OpaquePointer, path: String) throws {
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        // A 256 KiB page cache, not SQLite's 2 MiB: the store is read once at start and then
        // written in small batches, and the engine kept the whole file cached (issue 18: about
        // 1 MiB of its resident memory with the learned store at its cap).
        _ = try? rows(db, "PRAGMA cache_size=-256", operation: "limiting the page cache")
        // Health first: garbage gives SQLITE_NOTADB on the first read, damaged pages fail the check.
        let check: [String]
        do {
            check = try rows(db, "PRAGMA quick_check(5)", operation: "checking the file")
        } catch UserStoreError.sqlite(_, let code, let message)
            where code & 0xff == SQLITE_NOTADB || code & 0xff == SQLITE_CORRUPT
        {
            throw UserStoreError.corrupt(path: path, detail: message)
        }
        guard check == ["ok"] else {
            throw UserStoreError.corrupt(path: path, detail: "quick_check: " + check.prefix(3).joined(separator: "; "))
        }
        let version =
            try rows(db, "PRAGMA user_version", operation: "reading the schema version").first.flatMap { Int32($0) }
            ?? 0
        if version > schemaVersion {
            throw UserStoreError.newerSchema(path: path, found: version, supported: schemaVersion)
        }

        let mode = try rows(db, "PRAGMA journal_mode=WAL", operation: "switching to WAL").first ?? ""
        guard mode.lowercased() == "wal" else {
            throw UserStoreError.cannotOpen(path: path, reason: "WAL mode refused (\(mode))")
        }
        // synchronous=NORMAL in WAL mode: a COMMIT has written its pages into the -wal file (the
        // write(2) returned, so they are in the kernel's page cache) before it returns; only the
        // fsync is left to checkpoints. Killing the process (kill -9, a crash) therefore loses no
        // committed transaction — the kernel still writes the file out, and the next opener
        // replays the WAL. Only a power cut or kernel crash can lose the last commits, never the
        // file's consistency.
        _ = try rows(db, "PRAGMA synchronous=NORMAL", operation: "setting synchronous")
        // Deleted words are overwritten with zeros, not left in free pages; after a checkpoint
        // the log shrinks back to 1 MiB (a whole-model rewrite can make it several).
        _ = try rows(db, "PRAGMA secure_delete=ON", operation: "setting secure_delete")
        _ = try rows(db, "PRAGMA journal_size_limit=1048576", operation: "limiting the log")
        // Sorting and VACUUM work in memory: no temporary file with words in it is ever written.
        _ = try rows(db, "PRAGMA temp_store=MEMORY", operation: "keeping temporary data in memory")
        fixCompanionModes(path)

        if version < schemaVersion {
            try exec(db, "BEGIN IMMEDIATE", operation: "creating the schema")
            do {
                // Another process may have created it while we waited for the lock.
                let now =
                    try rows(db, "PRAGMA user_version", operation: "reading the schema version").first.flatMap {
                        Int32($0)
                    } ?? 0
                if now > schemaVersion {
                    throw UserStoreError.newerSchema(path: path, found: now, supported: schemaVersion)
                }
                if now < schemaVersion {
                    try exec(
                        db,
                        """
                        CREATE TABLE IF NOT EXISTS entries(
                            context TEXT NOT NULL,
                            key TEXT NOT NULL,
                            display TEXT NOT NULL,
                            count REAL NOT NULL,
                            last_used INTEGER NOT NULL,
                            PRIMARY KEY (context, key)
                        ) WITHOUT ROWID;
                        CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
                        INSERT OR IGNORE INTO meta(name, value) VALUES ('generation', 0);
                        PRAGMA user_version=\(schemaVersion);
                        """, operation: "creating the schema")
                }
                try exec(db, "COMMIT", operation: "creating the schema")
            } catch {
                try? exec(db, "ROLLBACK", operation: "creating the schema")
                throw error
            }
        }
        let tables = try rows(
            db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('entries', 'meta')",
            operation: "checking the schema")
        guard tables == ["2"] else {
            throw UserStoreError.corrupt(path: path, detail: "schema version \(schemaVersion) without its tables")
        }
        try addRemovalLog(db)
    }

    /// The removal log (`RemovalLog`): forgotten-word tags and the last wipe, so that writers
    /// holding older changes do not write removed words back. Added to any version-1 store (an
    /// older Inkling ignores it), so the schema version stays 1.
    private static func addRemovalLog(_ db: OpaquePointer) throws {
        let present = try rows(
            db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'forgotten'",
            operation: "checking the schema")
        let metaRows = try rows(
            db, "SELECT count(*) FROM meta WHERE name IN ('wiped_at', 'forgotten_complete_since')",
            operation: "checking the schema")
        guard present != ["1"] || metaRows != ["2"] else { return }
        try exec(
            db,
            """
            BEGIN IMMEDIATE;
            CREATE TABLE IF NOT EXISTS forgotten(tag INTEGER PRIMARY KEY, generation INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
            INSERT OR IGNORE INTO meta(name, value) VALUES ('wiped_at', 0), ('forgotten_complete_since', 0);
            COMMIT;
            """, operation: "adding the removal log")
    }

    private static func makeParentDirectory(of path: String) throws {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let directory = String(path[..<slash])
        var partial = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/", omittingEmptySubsequences: true) {
            partial += "/" + component
            if mkdir(partial, 0o700) != 0 && errno != EEXIST {
                throw UserStoreError.cannotCreateDirectory(path: partial, reason: String(cString: strerror(errno)))
            }
        }
    }

    /// Creates the file 0600 before SQLite does (SQLite gives `-wal`/`-shm` the database's mode),
    /// and tightens an existing file that is readable by others.
    private static func createPrivateFile(_ path: String) throws {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw UserStoreError.cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & 0o7777 != 0o600 { _ = fchmod(fd, 0o600) }
        Glibc.close(fd)
    }

    private static func fixCompanionModes(_ path: String) {
        for suffix in ["-wal", "-shm", "-journal"] {
            var info = stat()
            let file = path + suffix
            if stat(file, &info) == 0, info.st_mode & 0o7777 != 0o600 { _ = chmod(file, 0o600) }
        }
    }

    /// Moves a damaged store (and its WAL) to `<path>.corrupt-<UTC timestamp>`; drops its `-shm`.
    private static func moveAside(_ path: String) throws -> String {
        var seconds = time(nil)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y%m%dT%H%M%SZ", &parts)
        var target =
            path + ".corrupt-" + String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var attempt = 1
        while access(target, F_OK) == 0 {
            attempt += 1
            target =
                path + ".corrupt-"
                + String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) + "-\(attempt)"
        }
        guard rename(path, target) == 0 else {
            throw UserStoreError.cannotOpen(
                path: path, reason: "damaged, and moving it aside failed: \(String(cString: strerror(errno)))")
        }
        for suffix in ["-wal", "-journal"] where access(path + suffix, F_OK) == 0 {
            _ = rename(path + suffix, target + suffix)
        }
        _ = unlink(path + "-shm")
        return target
    }

    // MARK: Other files with learned words

    /// Every file besides the store itself that may hold learned words: damaged stores moved
    /// aside by `open` (`<path>.corrupt-*`, with their `-wal`, `-journal`, `-shm`), sorted. A
    /// SQLite companion of the live store (`-wal`, `-shm`) is not listed: it belongs to the store.
    public static func leftoverCopies(of path: String) -> [String] {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let directory = opendir(folder.isEmpty ? "/" : folder) else { return [] }
        defer { closedir(directory) }
        var found: [String] = []
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasPrefix(base + ".corrupt-") { found.append((slash == nil ? "" : folder + "/") + name) }
        }
        return found.sorted()
    }

    /// Deletes `leftoverCopies(of:)`; returns how many files were removed. Throws when one could
    /// not be removed (naming it).
    @discardableResult
    public static func removeLeftoverCopies(of path: String) throws -> Int {
        var removed = 0
        for file in leftoverCopies(of: path) {
            if unlink(file) == 0 {
                removed += 1
            } else if errno != ENOENT {
                throw UserStoreError.cannotOpen(
                    path: file,
                    reason: "could not remove this damaged copy of the store: \(String(cString: strerror(errno)))")
            }
        }
        return removed
    }

    // MARK: Reading

    /// Every entry.
    public func loadAll() throws -> [LearnedEntry] {
        try query("SELECT context, key, display, count, last_used FROM entries", operation: "reading entries") { _ in }
    }

    /// Every entry and the generation they belong to, read in one transaction (for a writer's start).
    public func snapshot() throws -> (entries: [LearnedEntry], generation: Int64) {
        if inTransaction { return (try loadAll(), try generation()) }
        try execute("BEGIN", operation: "reading entries")
        inTransaction = true
        defer {
            try? execute("COMMIT", operation: "reading entries")
            inTransaction = false
        }
        return (try loadAll(), try generation())
    }

    /// What a writer needs to take over from other processes: every entry, the generation, and
    /// the removal log, read in one transaction.
    public func snapshotWithRemovals() throws -> (entries: [LearnedEntry], generation: Int64, removals: RemovalLog) {
        if inTransaction { return (try loadAll(), try generation(), try removalLog()) }
        try execute("BEGIN", operation: "reading entries")
        inTransaction = true
        defer {
            try? execute("COMMIT", operation: "reading entries")
            inTransaction = false
        }
        return (try loadAll(), try generation(), try removalLog())
    }

    /// The forgets and the last wipe other writers must respect (see `RemovalLog`).
    public func removalLog() throws -> RemovalLog {
        let statement = try statement("SELECT tag, generation FROM forgotten")
        sqlite3_reset(statement)
        defer { sqlite3_reset(statement) }
        var forgotten: [UInt16: Int64] = [:]
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw Self.error(try connection(), status, "reading the removal log") }
            let tag = UInt16(truncatingIfNeeded: sqlite3_column_int64(statement, 0))
            forgotten[tag] = max(forgotten[tag] ?? 0, sqlite3_column_int64(statement, 1))
        }
        return RemovalLog(
            wipedAt: try scalar("SELECT value FROM meta WHERE name = 'wiped_at'", operation: "reading the removal log"),
            forgotten: forgotten,
            completeSince: try scalar(
                "SELECT value FROM meta WHERE name = 'forgotten_complete_since'", operation: "reading the removal log"))
    }

    /// The learned words (no context), most used first.
    public func words(limit: Int) throws -> [LearnedEntry] {
        try query(
            "SELECT context, key, display, count, last_used FROM entries WHERE context = '' ORDER BY count DESC, key LIMIT ?1",
            operation: "reading words"
        ) { statement in sqlite3_bind_int64(statement, 1, Int64(limit)) }
    }

    /// Number of entries (words and contexts).
    public var count: Int { (try? scalar("SELECT count(*) FROM entries", operation: "counting")).map(Int.init) ?? 0 }

    /// Number of learned words (entries without a context).
    public var wordCount: Int {
        (try? scalar("SELECT count(*) FROM entries WHERE context = ''", operation: "counting")).map(Int.init) ?? 0
    }

    /// Bytes on disk: the database file and its write-ahead log.
    public var fileSize: Int64 {
        var total: Int64 = 0
        for file in [path, path + "-wal"] {
            var info = stat()
            if stat(file, &info) == 0 { total += Int64(info.st_size) }
        }
        return total
    }

    /// Increases with every committed write, by any process.
    public func generation() throws -> Int64 {
        try scalar("SELECT value FROM meta WHERE name = 'generation'", operation: "reading the generation")
    }

    // MARK: Writing

    /// What `apply(_:ifGeneration:)` did.
    public enum ApplyOutcome: Equatable, Sendable {
        /// Written; the store is now at this generation.
        case applied(generation: Int64)
        /// Not written: someone else wrote since (the store is at this generation).
        case stale(generation: Int64)
    }

    /// Writes a batch of `UserModel.takeChanges()` in one transaction: an entry is upserted, nil
    /// deletes. Entries that `mayStore` refuses are deleted rather than stored. Returns the new
    /// generation.
    @discardableResult
    public func apply(_ changes: [(context: String, key: String, entry: LearnedEntry?)]) throws -> Int64 {
        guard case .applied(let generation) = try apply(changes, ifGeneration: nil) else { return try generation() }
        return generation
    }

    /// `apply`, but only if the store is still at `expected` (nil: unconditionally).
    public func apply(_ changes: [(context: String, key: String, entry: LearnedEntry?)], ifGeneration expected: Int64?)
        throws -> ApplyOutcome
    {
        try writeTransaction {
            let current = try generation()
            if let expected, expected != current { return .stale(generation: current) }
            let upsert = try statement(
                """
                INSERT INTO entries(context, key, display, count, last_used) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT(context, key) DO UPDATE SET display = excluded.display, count = excluded.count, last_used = excluded.last_used
                """)
            let delete = try statement("DELETE FROM entries WHERE context = ?1 AND key = ?2")
            for change in changes {
                if let entry = change.entry, Self.mayStore(entry) {
                    try run(upsert, operation: "writing an entry") { statement in
                        bind(statement, 1, change.context)
                        bind(statement, 2, change.key)
                        bind(statement, 3, entry.display)
                        sqlite3_bind_double(statement, 4, entry.count)
                        sqlite3_bind_int64(statement, 5, entry.lastUsed)
                    }
                } else {
                    try run(delete, operation: "deleting an entry") { statement in
                        bind(statement, 1, change.context)
                        bind(statement, 2, change.key)
                    }
                }
            }
            return .applied(generation: try bumpGeneration())
        }
    }

    /// A change a writer made on a model loaded at generation `base` (see `RemovalLog`).
    public struct PendingChange: Sendable {
        public var context: String
        public var key: String
        /// The entry's new state; nil: removed.
        public var entry: LearnedEntry?
        /// The store generation the writer's model was loaded at when it made the change.
        public var base: Int64
        public init(context: String, key: String, entry: LearnedEntry?, base: Int64) {
            self.context = context
            self.key = key
            self.entry = entry
            self.base = base
        }
    }

    /// What `reconcile` did.
    public struct ReconcileOutcome: Equatable, Sendable {
        /// The store's generation after the write.
        public var generation: Int64
        /// Another process had written since the writer's model was loaded (`modelGeneration`):
        /// the writer's model lacks that, and should be reloaded.
        public var othersWrote: Bool
        /// Changes not written because a later forget or wipe removed their words.
        public var dropped: Int
    }

    /// Writes a writer's changes in one transaction, whatever happened to the store meanwhile.
    ///
    /// A change whose words a forget or wipe removed after its model was loaded is dropped
    /// (`RemovalLog.allows`). Otherwise, if nobody wrote since its model was loaded, the entry is
    /// written as it is; if someone did, it is merged with the stored one (`LearnedMerge`:
    /// neither side's word is lost). Removals (nil) are always applied, and a removed plain word
    /// is logged like a forget (the engine's own forget, or a capacity eviction), so that other
    /// writers do not bring it back.
    @discardableResult
    public func reconcile(_ changes: [PendingChange], modelGeneration: Int64) throws -> ReconcileOutcome {
        try writeTransaction {
            let current = try generation()
            let next = current + 1
            let removals = try removalLog()
            let upsert = try statement(
                """
                INSERT INTO entries(context, key, display, count, last_used) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT(context, key) DO UPDATE SET display = excluded.display, count = excluded.count, last_used = excluded.last_used
                """)
            let merge = try statement(
                """
                INSERT INTO entries(context, key, display, count, last_used) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT(context, key) DO UPDATE SET
                    display = CASE WHEN excluded.last_used >= last_used THEN excluded.display ELSE display END,
                    count = min(max(count, excluded.count), ?6),
                    last_used = max(last_used, excluded.last_used)
                """)
            let delete = try statement("DELETE FROM entries WHERE context = ?1 AND key = ?2")
            var dropped = 0
            var removedWords: [String] = []
            for change in changes {
                guard removals.allows(context: change.context, key: change.key, base: change.base) else {
                    dropped += 1
                    continue
                }
                if let entry = change.entry, Self.mayStore(entry) {
                    let statement = change.base == current ? upsert : merge
                    try run(statement, operation: "writing an entry") { statement in
                        bind(statement, 1, change.context)
                        bind(statement, 2, change.key)
                        bind(statement, 3, entry.display)
                        sqlite3_bind_double(statement, 4, entry.count)
                        sqlite3_bind_int64(statement, 5, entry.lastUsed)
                        if change.base != current { sqlite3_bind_double(statement, 6, LearnedEntry.maximumCount) }
                    }
                } else {
                    try run(delete, operation: "deleting an entry") { statement in
                        bind(statement, 1, change.context)
                        bind(statement, 2, change.key)
                    }
                    if change.context.isEmpty && sqlite3_changes(db) > 0 { removedWords.append(change.key) }
                }
            }
            for key in removedWords { try logForget(key, generation: next) }
            let generation = try bumpGeneration()
            return ReconcileOutcome(generation: generation, othersWrote: current != modelGeneration, dropped: dropped)
        }
    }

    /// How long a forget is remembered for writers holding older changes (they flush every second
    /// or so; one stuck for longer has its older changes refused as a whole).
    public static let forgetLogSeconds: Int64 = 600

    /// Records a forgotten word's tag at `generation` and prunes tags older than `forgetLogSeconds`.
    private func logForget(_ key: String, generation: Int64) throws {
        let now = Int64(time(nil))
        let record = try statement(
            """
            INSERT INTO forgotten(tag, generation, at) VALUES (?1, ?2, ?3)
            ON CONFLICT(tag) DO UPDATE SET generation = max(generation, excluded.generation), at = excluded.at
            """)
        try run(record, operation: "logging a forget") { statement in
            sqlite3_bind_int64(statement, 1, Int64(RemovalLog.tag(key)))
            sqlite3_bind_int64(statement, 2, generation)
            sqlite3_bind_int64(statement, 3, now)
        }
        let horizon = try statement(
            """
            UPDATE meta SET value = max(value, (SELECT coalesce(max(generation), 0) FROM forgotten WHERE at < ?1 OR at > ?2))
            WHERE name = 'forgotten_complete_since'
            """)
        try run(horizon, operation: "pruning the removal log") { statement in
            sqlite3_bind_int64(statement, 1, now - Self.forgetLogSeconds)
            sqlite3_bind_int64(statement, 2, now + Self.forgetLogSeconds)
        }
        let prune = try statement("DELETE FROM forgotten WHERE at < ?1 OR at > ?2")
        try run(prune, operation: "pruning the removal log") { statement in
            sqlite3_bind_int64(statement, 1, now - Self.forgetLogSeconds)
            sqlite3_bind_int64(statement, 2, now + Self.forgetLogSeconds)
        }
    }

    /// The last check before disk: a positive count, and a word and context words that
    /// `LearningPolicy` allows (keys are lower case, so secrets are best caught before, where
    /// their case is known).
    static func mayStore(_ entry: LearnedEntry) -> Bool {
        guard entry.count.isFinite, entry.count > 0, entry.count <= LearnedEntry.maximumCount, entry.sanitized() != nil,
            LearningPolicy.isStorableWord(entry.display)
        else { return false }
        return entry.context.isEmpty
            || entry.context.split(separator: " ").allSatisfy { LearningPolicy.isStorableWord(String($0)) }
    }

    /// Merges imported entries in one transaction: the larger count and the later use win (so
    /// importing the same file twice is the same as once). Returns the number of entries merged.
    @discardableResult
    public func merge(_ entries: [LearnedEntry]) throws -> Int {
        try writeTransaction {
            let merge = try statement(
                """
                INSERT INTO entries(context, key, display, count, last_used) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT(context, key) DO UPDATE SET
                    display = CASE WHEN excluded.last_used >= last_used THEN excluded.display ELSE display END,
                    count = max(count, excluded.count),
                    last_used = max(last_used, excluded.last_used)
                """)
            var merged = 0
            for entry in entries where Self.mayStore(entry) {
                try run(merge, operation: "importing an entry") { statement in
                    bind(statement, 1, entry.context)
                    bind(statement, 2, entry.key)
                    bind(statement, 3, entry.display)
                    sqlite3_bind_double(statement, 4, entry.count)
                    sqlite3_bind_int64(statement, 5, entry.lastUsed)
                }
                merged += 1
            }
            try bumpGeneration()
            return merged
        }
    }

    /// Forgets a word everywhere (as a word, as a successor, inside a context), like
    /// `UserModel.forget`. Returns the number of entries removed.
    @discardableResult
    public func forget(_ word: String) throws -> Int {
        let key = WordText.key(word)
        guard !key.isEmpty else { return 0 }
        let removed = try writeTransaction {
            let delete = try statement(
                """
                DELETE FROM entries WHERE key = ?1 OR context = ?1
                    OR substr(context, 1, length(?1) + 1) = ?1 || ' '
                    OR (length(context) > length(?1) + 1 AND substr(context, -length(?1) - 1) = ' ' || ?1)
                """)
            try run(delete, operation: "forgetting a word") { statement in bind(statement, 1, key) }
            let removed = Int(sqlite3_changes(db))
            // Logged even when nothing was stored: a writer may still hold the word, unwritten.
            try logForget(key, generation: try generation() + 1)
            try bumpGeneration()
            return removed
        }
        scrubLog()
        return removed
    }

    /// Forgets everything. Returns the number of entries removed.
    @discardableResult
    public func wipe() throws -> Int {
        let removed = try writeTransaction {
            try execute("DELETE FROM entries", operation: "wiping")
            let removed = Int(sqlite3_changes(db))
            let generation = try bumpGeneration()
            // Every change a writer made before now is refused; forgotten tags are superseded.
            try execute("DELETE FROM forgotten", operation: "wiping")
            try execute("UPDATE meta SET value = \(generation) WHERE name = 'wiped_at'", operation: "wiping")
            return removed
        }
        try? execute("VACUUM", operation: "compacting")
        scrubLog()
        return removed
    }

    /// Copies the write-ahead log into the file and empties it (best effort: another
    /// connection reading may keep part of it until it finishes).
    public func checkpoint() { scrubLog() }

    /// Old page images of forgotten words live in the WAL until a checkpoint: truncate it.
    private func scrubLog() {
        guard let db else { return }
        sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
    }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`: takes the write lock at once,
    /// waiting up to the busy timeout). Nested calls join the outer transaction.
    public func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        if inTransaction { return try body() }
        try execute("BEGIN IMMEDIATE", operation: "starting a write")
        inTransaction = true
        do {
            let result = try body()
            try execute("COMMIT", operation: "committing")
            inTransaction = false
            return result
        } catch {
            try? execute("ROLLBACK", operation: "rolling back")
            inTransaction = false
            throw error
        }
    }

    @discardableResult
    private func bumpGeneration() throws -> Int64 {
        try execute("UPDATE meta SET value = value + 1 WHERE name = 'generation'", operation: "updating the generation")
        return try generation()
    }

    // MARK: SQLite plumbing

    private func connection() throws -> OpaquePointer {
        guard let db else {
            throw UserStoreError.sqlite(
                operation: "using the store", code: SQLITE_MISUSE, message: "the store is closed")
        }
        return db
    }

    private func statement(_ sql: String) throws -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        let db = try connection()
        var prepared: OpaquePointer?
        let status = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard status == SQLITE_OK, let prepared else { throw Self.error(db, status, "preparing a statement") }
        statements[sql] = prepared
        return prepared
    }

    private func run(_ statement: OpaquePointer, operation: String, bindings: (OpaquePointer) -> Void) throws {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        bindings(statement)
        let status = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard status == SQLITE_DONE || status == SQLITE_ROW else {
            throw Self.error(try connection(), status, operation)
        }
    }

    private func query(_ sql: String, operation: String, bindings: (OpaquePointer) -> Void) throws -> [LearnedEntry] {
        let statement = try statement(sql)
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        bindings(statement)
        defer { sqlite3_reset(statement) }
        var entries: [LearnedEntry] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw Self.error(try connection(), status, operation) }
            // Whatever wrote the file (an older or hostile program), what is read is in range.
            let stored = LearnedEntry(
                context: Self.text(statement, 0), key: Self.text(statement, 1), display: Self.text(statement, 2),
                count: sqlite3_column_double(statement, 3), lastUsed: sqlite3_column_int64(statement, 4))
            if let entry = stored.sanitized() { entries.append(entry) }
        }
        return entries
    }

    private func scalar(_ sql: String, operation: String) throws -> Int64 {
        let statement = try statement(sql)
        sqlite3_reset(statement)
        defer { sqlite3_reset(statement) }
        let status = sqlite3_step(statement)
        guard status == SQLITE_ROW else { throw Self.error(try connection(), status, operation) }
        return sqlite3_column_int64(statement, 0)
    }

    private func execute(_ sql: String, operation: String) throws {
        try Self.exec(try connection(), sql, operation: operation)
    }

    private func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        text.withCString { pointer in _ = inkling_sqlite3_bind_text(statement, index, pointer, -1) }
    }

    private static func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    private static func exec(_ db: OpaquePointer, _ sql: String, operation: String) throws {
        let status = sqlite3_exec(db, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(db, status, operation) }
    }

    /// The first column of every row of a statement, as text.
    private static func rows(_ db: OpaquePointer, _ sql: String, operation: String) throws -> [String] {
        var prepared: OpaquePointer?
        let status = sqlite3_prepare_v2(db, sql, -1, &prepared, nil)
        guard status == SQLITE_OK, let prepared else {
            sqlite3_finalize(prepared)
            throw error(db, status, operation)
        }
        defer { sqlite3_finalize(prepared) }
        var result: [String] = []
        while true {
            let step = sqlite3_step(prepared)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw error(db, step, operation) }
            result.append(text(prepared, 0))
        }
        return result
    }

    private static func error(_ db: OpaquePointer, _ status: Int32, _ operation: String) -> UserStoreError {
        if status & 0xff == SQLITE_BUSY || status & 0xff == SQLITE_LOCKED { return .busy(operation: operation) }
        return .sqlite(operation: operation, code: status, message: String(cString: sqlite3_errmsg(db)))
    }
}
