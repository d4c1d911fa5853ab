import FoundationEssentials
import InklingCore
import InklingStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `inkling learned …` and `inkling learn FILE`: the user's learned words, in the same SQLite
/// store the engine uses (`--db PATH` to use another). Output goes to the terminal only when the
/// user asks for it (list, export); nothing typed is ever logged.
enum LearnedCommand {
    /// The usage lines (`Commands.learned`, which the command line is read against).
    static var usage: String { Commands.learned.usage }

    /// Opens the store (`--db` or the default), saying so when a damaged one was moved aside.
    static func openStore(_ path: String) -> UserStore {
        do {
            let store = try UserStore.open(path: path)
            if let aside = store.movedAsideCorruptFile {
                warn(
                    "inkling: "
                        + tr(
                            "the user store was damaged ({detail}); moved it to {path} and started a new one",
                            ["detail": store.corruptionDetail ?? "", "path": aside]))
            }
            return store
        } catch {
            fail("\(error)")
        }
    }

    static func storePath(_ arguments: Arguments) -> String { arguments.options["--db"] ?? UserStore.defaultPath() }

    static func run(_ arguments: Arguments) {
        guard let subcommand = arguments.positional.first else { fail(usage, status: 2) }
        let rest = Array(arguments.positional.dropFirst())
        let path = storePath(arguments)
        do {
            switch subcommand {
            case "list":
                let store = openStore(path)
                let limit = arguments.int("--limit") ?? 50
                let words = try store.words(limit: max(0, limit))
                let width = max(4, words.map { $0.display.count }.max() ?? 0)
                // The column headings are for people (list is not an export format; `learned export` is).
                print(pad(tr("word"), width) + "  " + pad(tr("count"), 8, right: true) + "  " + tr("last used"))
                for entry in words {
                    print(
                        pad(entry.display, width) + "  " + pad(format(entry.count), 8, right: true) + "  "
                            + date(entry.lastUsed))
                }
                warn(
                    trn(
                        "{shown} of {count} word ({entries} entries with contexts, {size}) in {path}",
                        "{shown} of {count} words ({entries} entries with contexts, {size}) in {path}",
                        count: store.wordCount,
                        [
                            "shown": "\(words.count)", "count": "\(store.wordCount)", "entries": "\(store.count)",
                            "size": kib(store.fileSize), "path": path,
                        ]))
                warnAboutCopies(path)
            case "forget":
                guard let word = rest.first, rest.count == 1 else {
                    fail(tr("learned forget takes one WORD"), status: 2)
                }
                let store = openStore(path)
                let removed = try store.forget(word)
                print(
                    removed == 0
                        ? tr("'{word}' was not learned; nothing removed", ["word": word])
                        : trn(
                            "forgot '{word}': removed {count} entry", "forgot '{word}': removed {count} entries",
                            count: removed, ["word": word, "count": "\(removed)"]))
                warnAboutCopies(path)
            case "wipe":
                confirmWipe(path: path, arguments)
                let store = openStore(path)
                let removed = try store.wipe()
                let copies = try UserStore.removeLeftoverCopies(of: path)
                print(
                    trn(
                        "wiped {count} entry from {path}", "wiped {count} entries from {path}", count: removed,
                        ["count": "\(removed)", "path": path])
                        + (copies > 0
                            ? trn(
                                "; removed {count} damaged copy of the store moved aside earlier",
                                "; removed {count} damaged copies of the store moved aside earlier", count: copies,
                                ["count": "\(copies)"])
                            : ""))
            case "export":
                let target = rest.first ?? "-"
                let store = openStore(path)
                let entries = try store.loadAll()
                let text = UserModelFile.write(entries)
                if target == "-" {
                    writeAll(1, text)
                } else {
                    writePrivateFile(target, text)
                }
                warn(
                    trn(
                        "exported {count} entry to {target}", "exported {count} entries to {target}",
                        count: entries.count,
                        ["count": "\(entries.count)", "target": target == "-" ? tr("standard output") : target]))
            case "import":
                guard let file = rest.first, rest.count == 1 else {
                    fail(tr("learned import takes one FILE"), status: 2)
                }
                let text = readInput(file)
                let (entries, problems) = UserModelFile.parse(text)
                // Name each refused line (never its words), so the user can fix the file.
                for problem in problems.prefix(10) {
                    warn(
                        "inkling: "
                            + tr(
                                "{file} line {line} not imported: {reason}",
                                ["file": file, "line": "\(problem.line)", "reason": problem.reason]))
                }
                if problems.count > 10 {
                    warn(
                        "inkling: "
                            + trn(
                                "{count} more line of {file} not imported", "{count} more lines of {file} not imported",
                                count: problems.count - 10, ["count": "\(problems.count - 10)", "file": file]))
                }
                let store = openStore(path)
                let merged = try store.merge(entries)
                let refused = problems.count + entries.count - merged
                print(
                    trn(
                        "imported {count} entry from {file}", "imported {count} entries from {file}", count: merged,
                        ["count": "\(merged)", "file": file])
                        + (refused > 0
                            ? trn(
                                " ({count} line skipped: malformed or refused by the learning policy)",
                                " ({count} lines skipped: malformed or refused by the learning policy)", count: refused,
                                ["count": "\(refused)"]) : ""))
            case "_stress":
                stress(
                    path: path, start: arguments.int("--start") ?? 0, seconds: arguments.double("--seconds") ?? 30,
                    words: arguments.int("--words"))
            default:
                fail(tr("unknown learned command '{name}'", ["name": subcommand]) + "\n" + usage, status: 2)
            }
        } catch {
            fail("\(error)")
        }
    }

    /// `inkling learn FILE`: every line a document; its words recorded as the engine records
    /// committed words (`Predictor.learn`, with the language pack's capitalisation), all in one
    /// transaction that holds the store's write lock (a running engine's writer retries).
    static func learn(_ arguments: Arguments) {
        guard let file = arguments.positional.first, arguments.positional.count == 1 else {
            fail(tr("learn takes one FILE (or - for standard input)") + "\n" + usage, status: 2)
        }
        let text = readInput(file)
        let predictor = Predictor(pack: openPack(arguments))
        let path = storePath(arguments)
        let store = openStore(path)
        let now = Int64(time(nil))
        do {
            let (documents, recorded, skipped) = try store.writeTransaction {
                let entries = try store.loadAll()
                predictor.updateUserModel { $0.load(entries) }
                var documents = 0
                var recorded = 0
                var skipped = 0
                for line in text.split(separator: "\n", omittingEmptySubsequences: true)
                where line.contains(where: { !$0.isWhitespace }) {
                    documents += 1
                    predictor.reset()
                    let counts = LearnFromText.learn(document: line, with: predictor, now: now)
                    recorded += counts.recorded
                    skipped += counts.skipped
                }
                var changes: [(context: String, key: String, entry: LearnedEntry?)] = []
                predictor.updateUserModel { changes = $0.takeChanges() }
                try store.apply(changes)
                return (documents, recorded, skipped)
            }
            store.checkpoint()
            print(
                tr(
                    "learned {words} words from {documents} documents ({refused} refused by the learning policy); the store has {entries} entries, {size}",
                    [
                        "words": "\(recorded)", "documents": "\(documents)", "refused": "\(skipped)",
                        "entries": "\(store.count)", "size": kib(store.fileSize),
                    ]))
        } catch {
            fail("\(error)")
        }
    }

    /// Hidden crash-test writer: records made-up words (`LearnFromText.stressWord`) from `start`
    /// on, hands batches to a `UserStoreWriter` every 10 ms, which commits every 100 ms; after
    /// each COMMIT prints `committed N`: the first N words are on disk. Takes reloads like the
    /// engine when another process writes the store. With `words`, stops after that many words
    /// (or `seconds`, whichever comes first), writes the rest and prints `finished N`.
    static func stress(path: String, start: Int, seconds: Double, words limit: Int? = nil) {
        let store = openStore(path)
        let snapshot: (entries: [LearnedEntry], generation: Int64)
        do { snapshot = try store.snapshot() } catch { fail("\(error)") }
        let recordedAt = Mutex<[Int: Int]>([:])
        let writer = UserStoreWriter(store: store, generation: snapshot.generation, interval: .milliseconds(100)) {
            commit in
            guard let words = recordedAt.withLock({ $0[commit.through] }) else { return }
            writeAll(1, "committed \(words)\n")
        }
        var model = UserModel()
        model.capacity = Int.max
        var index = start
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int(seconds * 1000))
        var recent: [String] = []
        while clock.now < end, limit.map({ index - start < $0 }) ?? true {
            // As the engine does: another process wrote (forget, wipe…): continue from the store.
            if let fresh = writer.takeReload() {
                model = UserModel()
                model.capacity = Int.max
                model.load(fresh)
            }
            for _ in 0..<min(50, limit.map { start + $0 - index } ?? 50) {
                let word = LearnFromText.stressWord(index)
                model.record(word: word, after: recent, now: Int64(index))
                recent = Array((recent + [word]).suffix(2))
                index += 1
            }
            let words = index - start
            recordedAt.withLock { map in
                let number = writer.submit(model.takeChanges())
                map[number] = words
            }
            usleep(10_000)
        }
        do { try writer.flushAndWait() } catch { fail("\(error)") }
        if limit != nil { writeAll(1, "finished \(index - start)\n") }
    }

    // MARK: Helpers

    /// Damaged stores moved aside earlier still hold learned words: say so (names only).
    static func warnAboutCopies(_ path: String) {
        let copies = UserStore.leftoverCopies(of: path)
        guard !copies.isEmpty else { return }
        warn(
            "inkling: "
                + trn(
                    "{count} damaged copy of the store, moved aside earlier, may still hold learned words ({names}); `inkling learned wipe` removes them with everything else",
                    "{count} damaged copies of the store, moved aside earlier, may still hold learned words ({names}); `inkling learned wipe` removes them with everything else",
                    count: copies.count,
                    [
                        "count": "\(copies.count)",
                        "names": copies.prefix(3).joined(separator: ", ") + (copies.count > 3 ? ", …" : ""),
                    ]))
    }

    static func readInput(_ file: String) -> String {
        if file != "-" { return PackCommand.read(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let got = read(0, &buffer, buffer.count)
            if got <= 0 { break }
            bytes += buffer.prefix(got)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func writeAll(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let wrote = write(fd, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
                if wrote <= 0 { break }
                offset += wrote
            }
        }
    }

    /// An export holds what the user typed: the file is created 0600, written whole, then renamed.
    static func writePrivateFile(_ path: String, _ text: String) {
        // A fresh, unpredictable 0600 temporary opened with O_EXCL|O_NOFOLLOW: a link planted at
        // a guessable name beside the target (a shared folder) can no longer redirect the write.
        if let problem = PrivateFiles.writeAtomically(Array(text.utf8), to: path) { fail(problem) }
    }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return right ? fill + text : text + fill
    }

    /// One decimal; total for any value (the store clamps counts, but this must not trap either).
    static func format(_ count: Double) -> String {
        guard count.isFinite, abs(count) < 1e15 else { return count.isNaN ? "-" : (count < 0 ? "-∞" : "∞") }
        let tenths = Int((count * 10).rounded())
        return (tenths < 0 ? "-" : "") + "\(abs(tenths) / 10).\(abs(tenths) % 10)"
    }

    static func date(_ seconds: Int64) -> String {
        guard seconds > 0 else { return "-" }
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return "-" }
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func kib(_ bytes: Int64) -> String { "\((bytes + 1023) / 1024) KiB" }
}

/// Learning from the user's own texts with the engine's rules.
enum LearnFromText {
    /// Records the words of one document as if each had been committed in turn, through
    /// `Predictor.learn` (its context, sentence and capitalisation rules). What `LearningPolicy`
    /// refuses — numbers, e-mail addresses and URLs (the whole whitespace-delimited chunk),
    /// secret-looking tokens — is not recorded and is replaced by a sentence break in the text
    /// the predictor sees, so it never becomes the context of a later word either.
    static func learn(document: Substring, with predictor: Predictor, now: Int64) -> (recorded: Int, skipped: Int) {
        var before = ""
        var recorded = 0
        var skipped = 0
        var position = document.startIndex
        for chunk in document.split(whereSeparator: { $0.isWhitespace }) {
            before += document[position..<chunk.startIndex]
            position = chunk.endIndex
            let scalars = chunk.unicodeScalars
            let first = scalars.firstIndex(where: WordText.isWordScalar) ?? scalars.endIndex
            let last = scalars.lastIndex(where: WordText.isWordScalar).map { scalars.index(after: $0) } ?? first
            let trimmed = String(String.UnicodeScalarView(scalars[first..<max(first, last)]))
            let words = WordText.words(in: chunk)
            if !trimmed.isEmpty, !words.isEmpty,
                words.allSatisfy({ !LearningPolicy.mayRecord(String($0), surroundingChunk: trimmed) })
            {
                skipped += words.count
                before += "."
                continue
            }
            var cursor = chunk.startIndex
            for word in words {
                before += chunk[cursor..<word.startIndex]
                cursor = word.endIndex
                let text = String(word)
                if LearningPolicy.mayRecord(text, surroundingChunk: trimmed) {
                    predictor.learn(word: text, before: String(before.unicodeScalars.suffix(200)), now: now)
                    recorded += 1
                    before += text
                } else {
                    skipped += 1
                    before += "."
                }
            }
            before += chunk[cursor...]
            if before.unicodeScalars.count > 4000 { before = String(before.unicodeScalars.suffix(1000)) }
        }
        return (recorded, skipped)
    }

    /// The made-up word number `index` of the crash test (letters only, so the policy allows it);
    /// `Tests/Learning/crash_test.py` computes the same.
    static func stressWord(_ index: Int) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        var value = index
        var word = "zq"
        repeat {
            word.append(letters[value % 26])
            value /= 26
        } while value > 0
        return word
    }
}
