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
        // Not a speed test: a submit that touched the disk would wait for the held lock for the
        // whole busy timeout (5 s), so half of it separates "waited" from "a loaded machine".
        #expect(slowest < .milliseconds(Int64(UserStore.busyTimeoutMilliseconds / 2)))
        lock.release()
        try writer.flushAndWait()
        #expect(try UserStore.open(path: path).count == 40_000)
    }

    @Test func flushesAtMostOncePerInterval() throws {
        let path = temporaryStorePath()
        let store = try UserStore.open(path: path)
        let commits = Mutex<[ContinuousClock.Instant]>([])
        let writer = UserStoreWriter(store: store, generation: try store.generation(), interval: .milliseconds(200)) {
            commit in
            // When each flush began: the writer spaces the starts, and a slow transaction on a
            // loaded machine brings the next end closer than the interval.
            commits.withLock { $0.append(commit.started) }
        }
        let started = ContinuousClock.now
        for index in 0..<60 {
            writer.submit(upserts([entry("", "w" + LearnedKey.letters(index))]))
            usleep(10_000)
        }
        usleep(250_000)
        let times = commits.withLock { $0 }
        // The bound follows the time the loop really took (a loaded machine stretches it), not a
        // fixed window: at most one flush per interval, at least two over 850 ms or more.
        let elapsed = ContinuousClock.now - started
        let mostFlushes = Int(elapsed / .milliseconds(190)) + 1
        #expect(times.count >= 2 && times.count <= mostFlushes)
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

    /// Two engines (two sessions) write the same store: each one's words reach it, whichever
    /// wrote first (before: the second writer's batch was discarded as stale).
    @Test func twoWritersLoseNoWord() throws {
        let path = temporaryStorePath()
        let (first, _) = try UserStoreWriter.open(path: path, interval: .milliseconds(5))
        let (second, _) = try UserStoreWriter.open(path: path, interval: .milliseconds(5))
        var firstModel = UserModel()
        var secondModel = UserModel()
        var expected: Set<String> = []
        for round in 0..<20 {
            for index in 0..<10 {
                let a = "a" + LearnedKey.letters(round * 10 + index)
                let b = "b" + LearnedKey.letters(round * 10 + index)
                firstModel.record(word: a, after: [], now: Int64(round))
                secondModel.record(word: b, after: [], now: Int64(round))
                expected.formUnion([a, b])
            }
            // As the engine's tick: hand over the changes, then take a reload.
            first.submit(firstModel.takeChanges())
            if let fresh = first.takeReload() {
                firstModel = UserModel()
                firstModel.load(fresh)
            }
            second.submit(secondModel.takeChanges())
            if let fresh = second.takeReload() {
                secondModel = UserModel()
                secondModel.load(fresh)
            }
            if round % 3 == 0 { try first.flushAndWait() }
            if round % 2 == 0 { try second.flushAndWait() }
        }
        try first.flushAndWait()
        try second.flushAndWait()
        let stored = Set(try UserStore.open(path: path).loadAll().filter { $0.context.isEmpty }.map(\.key))
        #expect(
            expected.subtracting(stored).isEmpty,
            "\(expected.subtracting(stored).count) of \(expected.count) words lost")
        // And each model, after its reload, knows the other's words.
        if let fresh = second.takeReload() {
            secondModel = UserModel()
            secondModel.load(fresh)
        }
        #expect(secondModel.knows("a" + LearnedKey.letters(0)))
    }

    /// A word typed both in another session and here keeps the larger count.
    @Test func aWordBothWritersChangedKeepsTheLargerCount() throws {
        let path = temporaryStorePath()
        let (writer, _) = try UserStoreWriter.open(path: path, interval: .seconds(60))
        let other = try UserStore.open(path: path)
        try other.apply(upserts([entry("", "shared", 7, lastUsed: 50)]))
        writer.submit(upserts([entry("", "shared", 2, lastUsed: 60), entry("", "mine", 1)]))
        try writer.flushAndWait()
        #expect(sorted(try other.loadAll()) == [entry("", "mine"), entry("", "shared", 7, lastUsed: 60)])
    }

    /// `learned wipe` while the engine holds unwritten words: the wipe wins, they never reach the
    /// store or come back through the reload; words typed after the engine took the reload are kept.
    @Test func aWipeDuringPendingWritesRemovesThem() throws {
        let path = temporaryStorePath()
        let (writer, _) = try UserStoreWriter.open(path: path, interval: .seconds(60))
        var model = UserModel()
        model.record(word: "early", after: [], now: 1)
        writer.submit(model.takeChanges())
        try writer.flushAndWait()
        model.record(word: "pending", after: ["early"], now: 2)
        writer.submit(model.takeChanges())  // not yet written: the interval is long
        #expect(writer.pendingCount == 2)
        let cli = try UserStore.open(path: path)
        #expect(try cli.wipe() == 1)
        model.record(word: "stillold", after: [], now: 3)
        writer.submit(model.takeChanges())  // made on the old model too
        try writer.flushAndWait()
        #expect(try cli.loadAll() == [])
        let fresh = try #require(writer.takeReload())
        #expect(fresh == [])
        model = UserModel()
        model.load(fresh)
        model.record(word: "afterwards", after: [], now: 4)
        writer.submit(model.takeChanges())
        try writer.flushAndWait()
        #expect(try cli.loadAll().map(\.key) == ["afterwards"])
    }

    /// `learned forget` while the engine holds the word unwritten: forgotten for good, the other
    /// pending words are written.
    @Test func aForgetDuringPendingWritesWins() throws {
        let path = temporaryStorePath()
        let (writer, _) = try UserStoreWriter.open(path: path, interval: .seconds(60))
        var model = UserModel()
        model.record(word: "kept", after: [], now: 1)
        writer.submit(model.takeChanges())
        try writer.flushAndWait()  // the next batch waits for the (long) interval
        for word in ["secret", "also"] { model.record(word: word, after: [], now: 1) }
        model.record(word: "after", after: ["secret"], now: 1)
        writer.submit(model.takeChanges())
        let cli = try UserStore.open(path: path)
        #expect(try cli.forget("secret") == 0)  // not on disk yet
        try writer.flushAndWait()
        #expect(Set(try cli.loadAll().map { $0.context + "/" + $0.key }) == ["/kept", "/also", "/after"])
        let fresh = try #require(writer.takeReload())
        #expect(!fresh.contains { $0.key == "secret" || $0.context.contains("secret") })
    }

    /// Changes submitted after a reload was read but before the caller took it are laid over it:
    /// the caller's model does not lose them.
    @Test func aReloadIncludesTheChangesStillPending() throws {
        let path = temporaryStorePath()
        let (writer, _) = try UserStoreWriter.open(path: path, interval: .seconds(60))
        let cli = try UserStore.open(path: path)
        try cli.apply(upserts([entry("", "theirs")]))
        writer.submit(upserts([entry("", "first")]))
        try writer.flushAndWait()  // finds the other write: a reload is offered
        writer.submit(upserts([entry("", "second")]))  // pending, not in the reload's read
        let fresh = try #require(writer.takeReload())
        #expect(Set(fresh.map(\.key)) == ["theirs", "first", "second"])
        try writer.flushAndWait()
        #expect(Set(try cli.loadAll().map(\.key)) == ["theirs", "first", "second"])
    }

    @Test func aFailedWriteIsKeptAndRetried() throws {
        let path = temporaryStorePath()
        let store = try UserStore.open(path: path)
        store.setBusyTimeout(milliseconds: 20)
        let commits = Mutex(0)
        let writer = UserStoreWriter(store: store, generation: try store.generation(), interval: .milliseconds(30)) {
            _ in
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
