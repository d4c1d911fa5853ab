import Dispatch
import InklingCore
import Synchronization
import Testing

@testable import InklingStore

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct UserStoreWriterTests {
    @Test func batchesReachTheStoreCoalesced() throws {
        let path = temporaryStorePath()
        let (writer, entries) = try UserStoreWriter.open(path: path, interval: .milliseconds(50))
        #expect(entries.isEmpty)
        writer.submit(upserts([entry("", "one"), entry("", "two")]))
        writer.submit([(context: "", key: "one", entry: entry("", "one", 4)), (context: "", key: "two", entry: nil)])
        writer.submit(upserts([entry("one", "three")]))
        try writer.flushAndWait()
        #expect(writer.pendingCount == 0)
        let reader = try UserStore.open(path: path)
        #expect(sorted(try reader.loadAll()) == [entry("", "one", 4), entry("one", "three")])
    }

    @Test func submitDoesNotWaitForTheDisk() throws {
        let path = temporaryStorePath()
        let (writer, _) = try UserStoreWriter.open(path: path)
        // Another connection holds the write lock: the writer is stuck, the caller is not.
        let lock = try WriteLockHolder(path: path)
        let clock = ContinuousClock()
        var slowest = Duration.zero
        for round in 0..<20 {
            let batch = upserts((0..<2000).map { entry("", "w" + LearnedKey.letters(round * 2000 + $0)) })
            let started = clock.now
            writer.submit(batch)
            slowest = max(slowest, clock.now - started)
            usleep(20_000)
        }
        #expect(slowest < .milliseconds(50))
        lock.release()
        try writer.flushAndWait()
        #expect(try UserStore.open(path: path).count == 40_000)
    }

    @Test func flushesAtMostOncePerInterval() throws {
        let path = temporaryStorePath()
        let store = try UserStore.open(path: path)
        let commits = Mutex<[ContinuousClock.Instant]>([])
        let writer = UserStoreWriter(store: store, generation: try store.generation(), interval: .milliseconds(200)) { _ in
            commits.withLock { $0.append(ContinuousClock.now) }
        }
        for index in 0..<60 {
            writer.submit(upserts([entry("", "w" + LearnedKey.letters(index))]))
            usleep(10_000)
        }
        usleep(250_000)
        let times = commits.withLock { $0 }
        #expect(times.count >= 2 && times.count <= 5)
        for (earlier, later) in zip(times, times.dropFirst()) { #expect(later - earlier >= .milliseconds(190)) }
        try writer.flushAndWait()
        #expect(try UserStore.open(path: path).count == 60)
    }

    @Test func aChangeByAnotherProcessIsReloadedNotOverwritten() throws {
        let path = temporaryStorePath()
        let (writer, _) = try UserStoreWriter.open(path: path, interval: .milliseconds(10))
        var model = UserModel()
        for word in ["hello", "there", "secret", "plan"] { model.record(word: word, after: [], now: 1) }
        writer.submit(model.takeChanges())
        try writer.flushAndWait()
        #expect(writer.takeReload() == nil)

        // The CLI forgets a word while the engine still has it in memory.
        let cli = try UserStore.open(path: path)
        try cli.forget("secret")
        // The engine's next batch still carries it (a decay touches every entry).
        writer.submit(upserts(model.allEntries))
        try writer.flushAndWait()
        #expect(!(try cli.loadAll().contains { $0.key == "secret" }))
        // Until the engine takes the reload, its batches describe the old model: dropped.
        writer.submit(upserts(model.allEntries))
        try writer.flushAndWait()
        #expect(!(try cli.loadAll().contains { $0.key == "secret" }))
        let fresh = try #require(writer.takeReload())
        #expect(Set(fresh.map(\.key)) == ["hello", "there", "plan"])
        model = UserModel()
        model.load(fresh)
        model.record(word: "again", after: ["plan"], now: 2)
        writer.submit(model.takeChanges())
        try writer.flushAndWait()
        #expect(Set(try cli.loadAll().map(\.key)) == ["hello", "there", "plan", "again"])
        #expect(writer.takeReload() == nil)
    }

    @Test func aFailedWriteIsKeptAndRetried() throws {
        let path = temporaryStorePath()
        let store = try UserStore.open(path: path)
        store.setBusyTimeout(milliseconds: 20)
        let commits = Mutex(0)
        let writer = UserStoreWriter(store: store, generation: try store.generation(), interval: .milliseconds(30)) { _ in
            commits.withLock { $0 += 1 }
        }
        let lock = try WriteLockHolder(path: path)
        writer.submit(upserts([entry("", "kept"), entry("", "later")]))
        #expect(throws: UserStoreError.self) { try writer.flushAndWait() }
        #expect(writer.lastError == .busy(operation: "starting a write"))
        #expect(writer.pendingCount == 2)
        // A newer state of an entry submitted meanwhile wins over the failed batch's.
        writer.submit([(context: "", key: "later", entry: nil)])
        lock.release()
        // Retried by itself after the interval.
        for _ in 0..<100 where commits.withLock({ $0 }) == 0 { usleep(10_000) }
        #expect(commits.withLock { $0 } == 1)
        #expect(writer.lastError == nil)
        #expect(try UserStore.open(path: path).loadAll() == [entry("", "kept")])
    }
}

/// Another connection holding the store's write lock until `release()`.
private final class WriteLockHolder: Sendable {
    private let releaseSignal = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Returns once the lock is held.
    init(path: String) throws {
        let blocker = Shared(try UserStore.open(path: path))
        let locked = DispatchSemaphore(value: 0)
        let releaseSignal = releaseSignal
        let finished = finished
        DispatchQueue.global().async {
            try? blocker.value.writeTransaction {
                locked.signal()
                releaseSignal.wait()
            }
            finished.signal()
        }
        locked.wait()
    }

    /// Ends the other connection's transaction and waits until it has.
    func release() {
        releaseSignal.signal()
        finished.wait()
    }
}
