import CSQLite
import Dispatch
import FoundationEssentials
import InklingCore
import Testing

@testable import InklingStore

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh folder under /tmp, and the store path inside it.
func temporaryStorePath(_ name: String = "user.sqlite3") -> String {
    var template = Array("/tmp/inkling-store-test-XXXXXX".utf8CString)
    let folder = template.withUnsafeMutableBufferPointer { buffer in String(cString: mkdtemp(buffer.baseAddress!)!) }
    return folder + "/" + name
}

func entry(_ context: String, _ key: String, _ count: Double = 1, display: String? = nil, lastUsed: Int64 = 100)
    -> LearnedEntry
{
    LearnedEntry(context: context, key: key, display: display ?? key, count: count, lastUsed: lastUsed)
}

func upserts(_ entries: [LearnedEntry]) -> [(context: String, key: String, entry: LearnedEntry?)] {
    entries.map { (context: $0.context, key: $0.key, entry: $0) }
}

func sorted(_ entries: [LearnedEntry]) -> [LearnedEntry] {
    entries.sorted { ($0.context, $0.key) < ($1.context, $1.key) }
}

func mode(_ path: String) -> Int {
    var info = stat()
    guard stat(path, &info) == 0 else { return -1 }
    return Int(info.st_mode & 0o7777)
}

func fileBytes(_ path: String) -> [UInt8] {
    guard let data = try? Data(contentsOf: URL(filePath: path)) else { return [] }
    return Array(data)
}

func overwrite(_ path: String, at offset: Int, with bytes: [UInt8]) {
    let fd = open(path, O_WRONLY)
    precondition(fd >= 0)
    _ = bytes.withUnsafeBufferPointer { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
    close(fd)
}

/// A store handed to another thread in a test (used there only while this thread waits).
final class Shared<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

@Suite struct UserStoreTests {
    @Test func roundTripThroughAFile() throws {
        let path = temporaryStorePath()
        let entries = [
            entry("", "the", 12.5, display: "The", lastUsed: 1_700_000_000), entry("of", "the", 3),
            entry("out of", "the", 2),
            entry("", "café", 1.25, display: "Café"), entry("", "naïve", 0.5),
        ]
        do {
            let store = try UserStore.open(path: path)
            try store.apply(upserts(entries))
            #expect(store.count == 5)
            #expect(store.wordCount == 3)
        }
        let reopened = try UserStore.open(path: path)
        #expect(sorted(try reopened.loadAll()) == sorted(entries))
        #expect(reopened.movedAsideCorruptFile == nil)
        #expect(try reopened.words(limit: 2).map(\.key) == ["the", "café"])
        #expect(reopened.fileSize > 0)
    }

    @Test func batchesUpsertAndDeleteInOneTransaction() throws {
        let store = try UserStore.open(path: temporaryStorePath())
        let start = try store.generation()
        try store.apply(upserts([entry("", "alpha"), entry("", "beta"), entry("alpha", "beta")]))
        #expect(try store.generation() == start + 1)
        try store.apply([
            (context: "", key: "alpha", entry: entry("", "alpha", 5, display: "Alpha", lastUsed: 200)),
            (context: "alpha", key: "beta", entry: nil),
            (context: "", key: "gamma", entry: entry("", "gamma")),
            (context: "", key: "absent", entry: nil),
        ])
        #expect(try store.generation() == start + 2)
        #expect(
            sorted(try store.loadAll()) == [
                entry("", "alpha", 5, display: "Alpha", lastUsed: 200), entry("", "beta"), entry("", "gamma"),
            ])
    }

    @Test func aFailingBatchLeavesNothingBehind() throws {
        let path = temporaryStorePath()
        let store = try UserStore.open(path: path)
        try store.apply(upserts([entry("", "kept")]))
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try store.writeTransaction {
                try store.apply(upserts([entry("", "half"), entry("", "written")]))
                throw Boom()
            }
        }
        #expect(try store.loadAll() == [entry("", "kept")])
    }

    @Test func neverStoresWhatThePolicyRefuses() throws {
        let store = try UserStore.open(path: temporaryStorePath())
        try store.apply(
            upserts([
                entry("", "hello"), entry("", "abc123", display: "abc123"), entry("", "x", 0), entry("", "y", .nan),
                entry("", "k9sd8f7g6h5j4k3l", display: "K9sD8f7G6h5J4k3L"), entry("call 555", "me"),
                entry("bob@example.com", "then"),
            ]))
        #expect(try store.loadAll().map(\.key) == ["hello"])
    }

    @Test func forgetMatchesTheModel() throws {
        var model = UserModel()
        for sentence in ["the theme of the day", "other days the end", "then the them", "I saw the"] {
            var recent: [String] = []
            for word in sentence.split(separator: " ").map(String.init) {
                model.record(word: word, after: recent, now: 5)
                recent = Array((recent + [word]).suffix(2))
            }
        }
        let store = try UserStore.open(path: temporaryStorePath())
        try store.apply(model.takeChanges())
        #expect(sorted(try store.loadAll()) == sorted(model.allEntries))
        let removed = try store.forget("The")
        let before = model.entryCount
        model.forget("The")
        #expect(removed == before - model.entryCount)
        #expect(sorted(try store.loadAll()) == sorted(model.allEntries))
        #expect(try store.loadAll().contains { $0.key == "theme" && $0.context == "" })
        #expect(try store.forget("never-typed") == 0)
    }

    @Test func wipeForgetsEverything() throws {
        let path = temporaryStorePath()
        let store = try UserStore.open(path: path)
        try store.apply(upserts((0..<500).map { entry("", "wordaaaa" + LearnedKey.letters($0)) }))
        #expect(store.count == 500)
        #expect(try store.wipe() == 500)
        #expect(store.count == 0)
        #expect(try store.loadAll().isEmpty)
        // Nothing of the words is left in the file or its log.
        let bytes = fileBytes(path) + fileBytes(path + "-wal")
        #expect(!String(decoding: bytes, as: UTF8.self).contains("wordaaaa"))
    }

    @Test func exportImportRoundTripAndMergeRules() throws {
        let first = try UserStore.open(path: temporaryStorePath())
        let entries = [
            entry("", "hello", 3, display: "Hello", lastUsed: 10), entry("hello", "world", 2), entry("", "world", 2.5),
        ]
        try first.apply(upserts(entries))
        let text = UserModelFile.write(try first.loadAll())
        let second = try UserStore.open(path: temporaryStorePath())
        #expect(try second.merge(UserModelFile.read(text)) == 3)
        #expect(sorted(try second.loadAll()) == sorted(entries))
        // Importing twice is importing once; the larger count and the later use win.
        try second.merge(UserModelFile.read(text))
        #expect(sorted(try second.loadAll()) == sorted(entries))
        try second.merge([
            entry("", "hello", 1, display: "HELLO", lastUsed: 50), entry("", "world", 9, display: "World", lastUsed: 1),
        ])
        let merged = Dictionary(uniqueKeysWithValues: try second.loadAll().map { ($0.context + "|" + $0.key, $0) })
        #expect(merged["|hello"] == entry("", "hello", 3, display: "HELLO", lastUsed: 50))
        #expect(merged["|world"] == entry("", "world", 9, display: "world", lastUsed: 100))
    }

    @Test func filesArePrivate() throws {
        let path = temporaryStorePath()
        let saved = umask(0)  // the most permissive umask: the store must still be 0600
        defer { umask(saved) }
        let store = try UserStore.open(path: path)
        try store.apply(upserts([entry("", "secretish")]))
        let other = try UserStore.open(path: path)  // a second connection keeps -wal and -shm around
        _ = try other.loadAll()
        #expect(mode(path) == 0o600)
        #expect(mode(path + "-wal") == 0o600)
        #expect(mode(path + "-shm") == 0o600)
        let folder = String(path[..<path.lastIndex(of: "/")!])
        let nested = folder + "/a/b/user.sqlite3"
        _ = try UserStore.open(path: nested)
        #expect(mode(folder + "/a") == 0o700)
        #expect(mode(nested) == 0o600)
    }

    @Test func anExistingReadableFileIsTightened() throws {
        let path = temporaryStorePath()
        do {
            let store = try UserStore.open(path: path)
            try store.apply(upserts([entry("", "word")]))
        }
        chmod(path, 0o644)
        let store = try UserStore.open(path: path)
        #expect(mode(path) == 0o600)
        #expect(store.count == 1)
    }

    @Test func garbageIsMovedAsideAndAFreshStoreOpens() throws {
        let path = temporaryStorePath()
        let garbage = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }
        try Data(garbage).write(to: URL(filePath: path))
        #expect(throws: UserStoreError.self) { try UserStore.open(path: path, recoverCorrupt: false) }
        let store = try UserStore.open(path: path)
        let aside = try #require(store.movedAsideCorruptFile)
        #expect(aside.hasPrefix(path + ".corrupt-"))
        #expect(fileBytes(aside) == garbage)
        #expect(store.count == 0)
        try store.apply(upserts([entry("", "fresh")]))
        #expect(try store.loadAll() == [entry("", "fresh")])
    }

    /// The copies `open` moved aside are found (with their logs) and removed on request; the live
    /// store and unrelated files are not.
    @Test func movedAsideCopiesAreListedAndRemoved() throws {
        let path = temporaryStorePath()
        let folder = String(path[..<path.lastIndex(of: "/")!])
        for name in [
            "user.sqlite3.corrupt-20260101T000000Z", "user.sqlite3.corrupt-20260101T000000Z-wal",
            "user.sqlite3.corrupt-20260102T000000Z-2", "other.sqlite3.corrupt-x", "notes.txt",
        ] {
            try Data([1, 2, 3]).write(to: URL(filePath: folder + "/" + name))
        }
        let store = try UserStore.open(path: path)
        try store.apply(upserts([entry("", "live")]))
        #expect(
            UserStore.leftoverCopies(of: path).map { String($0.dropFirst(folder.count + 1)) } == [
                "user.sqlite3.corrupt-20260101T000000Z", "user.sqlite3.corrupt-20260101T000000Z-wal",
                "user.sqlite3.corrupt-20260102T000000Z-2",
            ])
        #expect(try UserStore.removeLeftoverCopies(of: path) == 3)
        #expect(UserStore.leftoverCopies(of: path) == [])
        #expect(access(folder + "/other.sqlite3.corrupt-x", F_OK) == 0 && access(folder + "/notes.txt", F_OK) == 0)
        #expect(try store.loadAll().map(\.key) == ["live"])
    }

    /// A store written by an older or hostile program: every value read is in range, rows no word
    /// can have are skipped (before: a count of 1e300 crashed `learned list`).
    @Test func hostileStoredValuesAreReadTotally() throws {
        let path = temporaryStorePath()
        let store = try UserStore.open(path: path)
        try store.apply(
            upserts([entry("", "huge"), entry("", "old"), entry("", "evil"), entry("", "neg"), entry("", "text")]))
        // Another program writes through its own connection.
        var db: OpaquePointer?
        #expect(sqlite3_open(path, &db) == SQLITE_OK)
        for sql in [
            "UPDATE entries SET count = 1e300 WHERE key = 'huge'",
            "UPDATE entries SET last_used = -9223372036854775808 WHERE key = 'old'",
            "UPDATE entries SET display = 'ev' || char(27) || '[2Jil' WHERE key = 'evil'",
            "UPDATE entries SET count = -4 WHERE key = 'neg'",
            "UPDATE entries SET count = 'lots' WHERE key = 'text'",
        ] {
            #expect(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, "\(sql)")
        }
        sqlite3_close(db)
        let read = sorted(try store.loadAll())
        #expect(read.map(\.key) == ["huge", "old"])
        #expect(read[0].count == LearnedEntry.maximumCount)
        #expect(read[1].lastUsed == 0)
        #expect(try store.words(limit: 10).map(\.key) == ["huge", "old"])
    }

    @Test func damagedPagesAreDetected() throws {
        let path = temporaryStorePath()
        do {
            let store = try UserStore.open(path: path)
            try store.apply(upserts((0..<3000).map { entry("", "w" + LearnedKey.letters($0)) }))
        }
        let size = fileBytes(path).count
        #expect(size > 16 * 4096)
        overwrite(path, at: 4096 * 3, with: [UInt8](repeating: 0xA5, count: 4096 * 4))
        do {
            _ = try UserStore.open(path: path, recoverCorrupt: false)
            Issue.record("a damaged store opened")
        } catch let error as UserStoreError {
            guard case .corrupt = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(error.description.contains("damaged"))
        }
        let store = try UserStore.open(path: path)
        #expect(store.movedAsideCorruptFile != nil)
        #expect(store.count == 0)
    }

    @Test func aNewerSchemaIsRefusedAndLeftAlone() throws {
        let path = temporaryStorePath()
        do {
            let store = try UserStore.open(path: path)
            try store.apply(upserts([entry("", "word")]))
        }
        // user_version is the big-endian 32-bit integer at offset 60 of the header.
        overwrite(path, at: 60, with: [0, 0, 0, 7])
        let before = fileBytes(path)
        #expect {
            _ = try UserStore.open(path: path)
        } throws: { error in
            guard let error = error as? UserStoreError, case .newerSchema(_, 7, UserStore.schemaVersion) = error else {
                return false
            }
            return error.description.contains("newer Inkling")
        }
        #expect(fileBytes(path) == before)
        #expect(access(path, F_OK) == 0)
    }

    @Test func twoConnectionsAtOnce() throws {
        let path = temporaryStorePath()
        let engine = Shared(try UserStore.open(path: path))
        let cli = try UserStore.open(path: path)
        try engine.value.apply(upserts([entry("", "first")]))
        let locked = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            // The engine holds the write lock for 300 ms.
            try? engine.value.writeTransaction {
                try engine.value.apply(upserts([entry("", "engine")]))
                locked.signal()
                usleep(300_000)
            }
            done.signal()
        }
        locked.wait()
        // Readers are not blocked by the writer (WAL), and see the last commit.
        #expect(try cli.loadAll() == [entry("", "first")])
        // A second writer waits for the lock (busy timeout) instead of failing.
        let clock = ContinuousClock()
        let started = clock.now
        try cli.apply(upserts([entry("", "cli")]))
        #expect(clock.now - started >= .milliseconds(200))
        done.wait()
        #expect(sorted(try cli.loadAll()).map(\.key) == ["cli", "engine", "first"])
        #expect(try engine.value.generation() == cli.generation())
    }

    @Test func defaultPathFollowsXDG() {
        let saved = getenv("XDG_DATA_HOME").map { String(cString: $0) }
        defer { if let saved { setenv("XDG_DATA_HOME", saved, 1) } else { unsetenv("XDG_DATA_HOME") } }
        setenv("XDG_DATA_HOME", "/xdg/data", 1)
        #expect(UserStore.defaultPath() == "/xdg/data/inkling/user.sqlite3")
        setenv("XDG_DATA_HOME", "relative/ignored", 1)
        #expect(UserStore.defaultPath().hasSuffix("/.local/share/inkling/user.sqlite3"))
    }
}

/// Distinct letter-only keys (the policy refuses digits).
enum LearnedKey {
    static func letters(_ value: Int) -> String {
        var value = value
        var text = ""
        repeat {
            text.append(Character(UnicodeScalar(97 + value % 26)!))
            value /= 26
        } while value > 0
        return text
    }
}
