import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// A pack in use must not depend on its file: `cp` or `rsync --inplace` over it, or a disk-full
/// truncation, used to kill the process with SIGBUS while the pack was mapped.
@Suite("PackFile lifetime")
struct PackFileLifetimeTests {
    /// Everything a process reads from a pack: the bytes (checksum over all of them), and
    /// suggestions that walk the vocabulary, n-grams and character model.
    static func fingerprint(_ pack: LanguagePack) -> [String] {
        let predictor = Predictor(pack: pack)
        var out = ["\(PackFormat.checksum(pack.file.mappedBytes))"]
        for before in ["", "Th", "the pres", "I don'", "Hillary Cl", "at the caf"] {
            out += predictor.suggest(before: before, count: 5)
        }
        return out
    }

    #if canImport(Glibc)
        @Test("a pack file truncated in place after opening does not crash the process or change the pack")
        func truncatedInPlace() throws {
            let path = try FixturePacks.writeTemporaryFile(FixturePacks.englishBytes)
            defer { FixturePacks.removeTemporaryFile(path) }
            let pack = try LanguagePack(path: path)
            let before = Self.fingerprint(pack)
            // Same inode, now empty: every page a mapping of it had would raise SIGBUS.
            #expect(truncate(path, 0) == 0)
            #expect(Self.fingerprint(pack) == before)
            #expect(Self.fingerprint(FixturePacks.english) == before)
        }

        @Test("a pack file rewritten in place with other bytes does not change the pack in use")
        func rewrittenInPlace() throws {
            let path = try FixturePacks.writeTemporaryFile(FixturePacks.englishBytes)
            defer { FixturePacks.removeTemporaryFile(path) }
            let pack = try LanguagePack(path: path)
            let before = Self.fingerprint(pack)
            // As `cp other.inkpack` over it: truncate, then write a shorter, different file.
            let other = FixturePacks.build(wordFrequencies: "zebra\t0.5\nzoo\t0.5\n", corpus: "zebra zoo zebra")
            let fd = open(path, O_WRONLY | O_TRUNC)
            #expect(fd >= 0)
            _ = other.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            #expect(Self.fingerprint(pack) == before)
        }
    #endif

    #if os(Linux)
        @Test("opening a pack reads its file into private memory: the file is not mapped")
        func notMapped() throws {
            let path = try FixturePacks.writeTemporaryFile(FixturePacks.englishBytes)
            defer { FixturePacks.removeTemporaryFile(path) }
            let pack = try LanguagePack(path: path)
            // The committed pack too: large files must not be mapped either.
            let committed = FixturePacks.committedEnglishPackPath(from: #filePath)
            let large = try committed.map { try LanguagePack(path: $0) }
            let maps = String(decoding: try Data(contentsOf: URL(filePath: "/proc/self/maps")), as: UTF8.self)
            #expect(!maps.contains(path))
            if let committed { #expect(!maps.contains(committed)) }
            #expect(pack.wordCount == FixturePacks.english.wordCount)
            #expect(large.map { $0.wordCount > 50_000 } ?? true)
        }
    #endif

    @Test("PackFile.read gives the file's bytes; LanguagePack(data:path:) keeps the path")
    func readThenOpen() throws {
        let path = try FixturePacks.writeTemporaryFile(FixturePacks.englishBytes)
        defer { FixturePacks.removeTemporaryFile(path) }
        let data = try PackFile.read(path: path)
        #expect(Array(data) == FixturePacks.englishBytes)
        let pack = try LanguagePack(data: data, path: path)
        #expect(pack.path == path)
    }

    @Test("a missing file, a folder and a FIFO are refused with one clear reason")
    func unreadable() throws {
        let missing = FileManager.default.temporaryDirectory.appending(
            path: "inkling-test-\(UUID().uuidString).inkpack"
        ).path
        #expect(throws: PackError.unreadable(path: missing, reason: "no such file")) {
            try PackFile.read(path: missing)
        }
        let folder = FileManager.default.temporaryDirectory.path
        #expect(throws: PackError.unreadable(path: folder, reason: "it is a folder, not a file")) {
            try PackFile.read(path: folder)
        }
        #if canImport(Glibc)
            // Reading a FIFO would block forever (no writer) instead of failing.
            let fifo = FileManager.default.temporaryDirectory.appending(path: "inkling-test-\(UUID().uuidString).fifo")
                .path
            #expect(mkfifo(fifo, 0o600) == 0)
            defer { unlink(fifo) }
            #expect(throws: PackError.unreadable(path: fifo, reason: "not a regular file")) {
                try PackFile.read(path: fifo)
            }
            let linkToFifo = fifo + ".link"
            #expect(symlink(fifo, linkToFifo) == 0)
            defer { unlink(linkToFifo) }
            #expect(throws: PackError.unreadable(path: linkToFifo, reason: "not a regular file")) {
                try PackFile.read(path: linkToFifo)
            }
        #endif
    }

    #if canImport(Glibc)
        @Test("a pack reached through symbolic links opens (two hops, one relative)")
        func symbolicLink() throws {
            let path = try FixturePacks.writeTemporaryFile(FixturePacks.englishBytes)
            defer { FixturePacks.removeTemporaryFile(path) }
            let first = path + ".link1"
            let second = path + ".link2"
            #expect(symlink(URL(filePath: path).lastPathComponent, first) == 0)
            #expect(symlink(first, second) == 0)
            defer {
                unlink(first)
                unlink(second)
            }
            let pack = try LanguagePack(path: second)
            #expect(pack.path == second)
            #expect(pack.wordCount == FixturePacks.english.wordCount)
        }
    #endif
}
