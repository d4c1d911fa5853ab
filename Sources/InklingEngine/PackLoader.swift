import CIBus
import Dispatch
import FoundationEssentials
import InklingCore
import InklingDigest

#if canImport(Glibc)
    import Glibc
#endif

/// The active language: English from the bundled pack at once; another language's downloaded
/// pack is verified (size and SHA-256 against the manifest, GLib's GChecksum) and opened on a
/// background queue, then every live session switches to it on the main loop. Until then, and
/// whenever a pack is refused, English serves. A pack no longer used has no references left
/// (sessions, checkers and this loader drop it), so its memory is freed.
///
/// Packs the user can write are read into private memory, never mapped, so a pack file
/// rewritten or truncated on disk cannot crash the engine; the bundled pack is mapped only when
/// no ordinary user can change it (`openBundled`, `PackOpening`). Private memory cannot be
/// paged back to the file, so while
/// another language is active the English pack is let go and read again when English is
/// needed (tens of milliseconds), keeping one pack resident rather than two.
///
/// One predictor per process is shared by every session: one learned model, one stream of
/// changes for the user store.
@MainActor
enum PackLoader {
    /// English over the bundled pack while English is active (nil otherwise, or when none was found).
    private(set) static var english: Predictor?
    /// The bundled English pack (nil when none was found or it could not be opened at start:
    /// keys pass through).
    private static var englishPath: String?
    /// The predictor every session uses.
    private(set) static var predictor: Predictor?
    /// The language of `predictor`.
    private(set) static var activeLanguage = "en"
    /// The language asked for last (it may still be loading, or have been refused).
    private static var requested: String?
    /// Increases with every request; a load finishing for an older one is discarded.
    private static var generation = 0
    private static var pendingNotice: String?

    static func start() {
        english = EngineProcess.pack.map { Predictor(pack: $0) }
        englishPath = EngineProcess.pack?.path
        EngineProcess.pack = nil  // held by `english` alone, so that it can be let go
        predictor = english
        g_timeout_add_seconds(
            2,
            { _ in
                MainActor.assumeIsolated { PackLoader.dropPagesIfIdle() }
                return 1  // G_SOURCE_CONTINUE
            }, nil)
        g_timeout_add(
            startPagesDropDelayMilliseconds,
            { _ in
                ResidentFilePages.drop()
                return 0  // G_SOURCE_REMOVE
            }, nil)
    }

    /// The English predictor, reading the bundled pack again if it was let go; nil (logged)
    /// when it cannot be read now.
    private static func englishPredictor() -> Predictor? {
        if let english { return english }
        guard let englishPath else { return nil }
        do {
            english = Predictor(pack: try openBundled(path: englishPath))
        } catch {
            log("cannot read the English language pack \(englishPath) again: \(error)")
        }
        return english
    }

    static func takePendingNotice() -> String? {
        defer { pendingNotice = nil }
        return pendingNotice
    }

    /// Makes `language` the active one (asynchronously unless it is English).
    static func request(language: String) {
        guard language != requested else { return }
        requested = language
        generation += 1
        pendingNotice = nil
        guard englishPath != nil else { return }  // no English pack: sessions pass keys through
        if language == "en" {
            // If English cannot be read again, the active language keeps serving.
            if let english = englishPredictor() { activate(english, language: "en") }
            return
        }
        let ticket = generation
        DispatchQueue.global(qos: .userInitiated).async {
            var unhashedDigest: String?
            let outcome = load(language: language, unhashedDigest: &unhashedDigest)
            let result = LoadResult(
                ticket: ticket, language: language, outcome: outcome, unhashedDigest: unhashedDigest)
            let box = Unmanaged.passRetained(result).toOpaque()
            g_idle_add(
                { data in
                    guard let data else { return 0 }  // G_SOURCE_REMOVE; the box above is never nil
                    let result = Unmanaged<LoadResult>.fromOpaque(data).takeRetainedValue()
                    MainActor.assumeIsolated { PackLoader.finished(result) }
                    return 0  // G_SOURCE_REMOVE
                }, box)
        }
    }

    private static func finished(_ result: LoadResult) {
        guard result.ticket == generation, englishPath != nil else { return }  // superseded
        switch result.outcome {
        case .success(let pack):
            activate(Predictor(pack: pack), language: result.language)
            if let digest = result.unhashedDigest { hashLater(result, expecting: digest) }
        case .failure(let failure):
            log("language pack '\(result.language)' refused: \(failure.reason)")
            if let english = englishPredictor() { activate(english, language: "en") }
            let message =
                "Inkling: the \(result.language) language pack cannot be used (\(failure.reason)); typing in English"
            // Shown where the user is typing; before any focus-in, at the next one.
            if let focused = EngineRegistry.lastFocused {
                if let session = focused.session {
                    focused.show(session.showNotice(message))
                } else {
                    focused.show([.updateAuxiliaryText(message)])
                }
            } else {
                pendingNotice = message
            }
        }
    }

    private static func activate(_ next: Predictor, language: String) {
        if let predictor, predictor !== next {
            LearningBridge.transfer(from: predictor, to: next)
        }
        predictor = next
        activeLanguage = language
        for instance in EngineRegistry.live {
            guard let session = instance.session else { continue }
            if session.predictor !== next { instance.show(session.switchPredictor(to: next)) }
        }
        // The new language's settings (its layout, unless keyboard-layout names one) reach every session.
        EngineSettings.applyToSessions()
        // Every session now uses `next`: English, if it is not `next`, has no other reference
        // left and its pack's memory is freed (it is read again when English is needed).
        if language != "en" { english = nil }
    }

    // MARK: Loading (background queue)

    struct Failure: Error {
        var reason: String
    }

    final class LoadResult: @unchecked Sendable {
        let ticket: Int
        let language: String
        let outcome: Result<LanguagePack, Failure>
        /// The manifest's digest when the pack was used on its verification record, unhashed.
        let unhashedDigest: String?
        init(ticket: Int, language: String, outcome: Result<LanguagePack, Failure>, unhashedDigest: String? = nil) {
            self.unhashedDigest = unhashedDigest
            self.ticket = ticket
            self.language = language
            self.outcome = outcome
        }
    }

    /// The manifest: the downloaded one (`$XDG_DATA_HOME/inkling/manifest.json`), else the one
    /// shipped next to the bundled packs.
    nonisolated static func manifest() -> PackManifest? {
        var candidates = [UserPaths.dataFolder() + "/manifest.json"]
        for folder in PackLocator.bundledPackFolders(executablePath: PackLocator.currentExecutablePath()) {
            candidates.append(URL(filePath: folder).deletingLastPathComponent().appending(path: "manifest.json").path)
        }
        for path in candidates {
            guard let data = try? Data(contentsOf: URL(filePath: path)) else { continue }
            do {
                return try PackManifest.parse(data)
            } catch {
                log("ignoring the pack manifest \(path): \(error)")
            }
        }
        return nil
    }

    /// Languages with a downloaded pack file (`<code>.inkpack` in the user's pack folder).
    /// Whether a pack is whole is checked when it is chosen, off the main thread.
    static func installedLanguages() -> Set<String> {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: UserPaths.packFolder())) ?? []
        let downloaded = Set(
            files.filter { $0.hasSuffix(".inkpack") }.map { String($0.dropLast(".inkpack".count)) }.filter(
                LanguageCode.isValid))
        return downloaded.union(PackLocator.systemPackLanguages(executablePath: PackLocator.currentExecutablePath()))
    }

    /// Language names from the manifest (read once; English is always known).
    static func displayNames() -> [String: String] {
        if let names = cachedDisplayNames { return names }
        var names = ["en": "English"]
        for entry in PackLocator.systemPackEntries(executablePath: PackLocator.currentExecutablePath()) {
            names[entry.language] = entry.displayName
        }
        for entry in manifest()?.packs ?? [] { names[entry.language] = entry.displayName }
        cachedDisplayNames = names
        return names
    }
    private static var cachedDisplayNames: [String: String]?

    /// A pack used on its verification record is hashed all the same, later, at a quiet moment
    /// (a background queue, a while after the switch): the bytes in use are checked against the
    /// manifest, and on a mismatch the record goes and the pack is refused as at a load.
    private static func hashLater(_ loaded: LoadResult, expecting digest: String) {
        DispatchQueue.global(qos: .background).asyncAfter(deadline: .now() + 5) {
            guard case .success(let pack) = loaded.outcome else { return }
            let actual = FileDigest.sha256(bytes: pack.file.mappedBytes)
            guard actual != digest else { return }
            unlink(verificationRecordPath(language: loaded.language))
            let refusal = LoadResult(
                ticket: loaded.ticket, language: loaded.language, outcome: .failure(Failure(reason: "SHA-256 mismatch"))
            )
            let box = Unmanaged.passRetained(refusal).toOpaque()
            g_idle_add(
                { data in
                    guard let data else { return 0 }  // G_SOURCE_REMOVE
                    let result = Unmanaged<LoadResult>.fromOpaque(data).takeRetainedValue()
                    // Superseded (another language asked for since) means the pack is no longer in use.
                    MainActor.assumeIsolated { PackLoader.finished(result) }
                    return 0  // G_SOURCE_REMOVE
                }, box)
        }
    }

    /// Opens and verifies the downloaded pack of `language`; `unhashedDigest` is set to the
    /// manifest's digest when its SHA-256 was not computed because its record stands.
    nonisolated static func load(language: String, unhashedDigest: inout String?) -> Result<LanguagePack, Failure> {
        // The code becomes a file name: the one shared check, whatever the settings hold.
        guard LanguageCode.isValid(language) else { return .failure(Failure(reason: "not a language code")) }
        var path = UserPaths.packFolder() + "/\(language).inkpack"
        var status = stat()
        var manifest = manifest()
        if stat(path, &status) != 0 {
            // No downloaded copy: a pack installed by a Debian package, checked against its own entry.
            guard
                let system = PackLocator.systemPack(
                    language: language, executablePath: PackLocator.currentExecutablePath()),
                stat(system.packPath, &status) == 0
            else {
                return .failure(Failure(reason: "not installed; run 'inkling packs install \(language)'"))
            }
            path = system.packPath
            manifest = (try? Data(contentsOf: URL(filePath: system.manifestPath))).flatMap {
                try? PackManifest.parse($0)
            }
        }
        guard let manifest, let entry = manifest.entry(for: language) else {
            return .failure(Failure(reason: "no manifest entry"))
        }
        guard entry.isSupported else {
            return .failure(Failure(reason: "it needs Inkling \(entry.minEngineVersion) or newer"))
        }
        guard Int(status.st_size) == entry.size else {
            return .failure(Failure(reason: "size \(status.st_size) bytes, expected \(entry.size)"))
        }
        do {
            // Read once into private memory; size, SHA-256 and structure are all checked on
            // these very bytes, and the file changing later cannot affect the pack in use.
            // The SHA-256 is skipped only when a record of an earlier hash covers this very file
            // unchanged, as `stat` shows it both before and after the read (PackVerification).
            let before = identity(of: path)
            let data = try PackFile.read(path: path)
            let recordPath = verificationRecordPath(language: language)
            let record = (try? String(contentsOfFile: recordPath, encoding: .utf8)).flatMap(
                PackVerificationRecord.init(encoded:))
            let unchanged = before != nil && before == identity(of: path)
            var trusted = false
            if let before, unchanged,
                PackVerification.decide(current: before, record: record, expectedSHA256: entry.sha256) == .trustRecord
            {
                log("language pack '\(language)' unchanged since its SHA-256 was verified; not hashed again")
                unhashedDigest = entry.sha256
                trusted = true
            }
            // The one verifier the CLI shares; its SHA-256 step takes the record's word when it stands.
            let sha256 = { (bytes: Data) -> String? in
                if trusted { return entry.sha256 }
                let hashedAt = wallClockNanoseconds()
                guard let digest = bytes.withUnsafeBytes({ FileDigest.sha256(bytes: $0) }) else { return nil }
                guard digest == entry.sha256 else {
                    unlink(recordPath)
                    return digest
                }
                if let before, unchanged {
                    let fresh = PackVerificationRecord(identity: before, sha256: digest, verifiedAt: hashedAt)
                    if PackVerification.isSettled(fresh) { writeRecord(fresh, to: recordPath) }
                }
                return digest
            }
            return PackVerifier.verify(data, against: entry, path: path, sha256: sha256).mapError {
                Failure(reason: $0.reason)
            }
        } catch {
            return .failure(Failure(reason: "\(error)"))
        }
    }

    // MARK: The bundled pack, mapped (issue 18; the decisions are PackOpening's)

    /// Opens the bundled English pack: mapped when no ordinary user can change the file, used at
    /// once when the record of its last verification matches the opened file (verified again in
    /// the background, a few seconds later), else verified in full first; read into private
    /// memory when the file could change under a mapping.
    static func openBundled(path: String) throws(PackError) -> LanguagePack {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return try LanguagePack(path: path) }  // its error says why
        defer { close(descriptor) }
        var status = stat()
        var fileSystem = statvfs()
        guard fstat(descriptor, &status) == 0, fstatvfs(descriptor, &fileSystem) == 0 else {
            return try LanguagePack(path: path)
        }
        let identity = identity(of: status)
        let facts = PackFileFacts(
            identity: identity, ownerUID: UInt32(status.st_uid), permissions: UInt32(status.st_mode & 0o7777),
            isRegularFile: status.st_mode & S_IFMT == S_IFREG,
            onReadOnlyFileSystem: fileSystem.f_flag & UInt(ST_RDONLY) != 0)
        let recordPath = verificationRecordPath(language: "en")
        let record = (try? String(contentsOfFile: recordPath, encoding: .utf8)).flatMap(
            PackVerificationRecord.init(encoded:))
        let plan = PackOpening.plan(for: facts, record: record)
        guard plan != .readPrivately,
            let mapping = mmap(nil, identity.size, PROT_READ, MAP_PRIVATE, descriptor, 0), mapping != MAP_FAILED
        else { return try LanguagePack(path: path) }
        let bytes = mappedData(mapping, count: identity.size)
        if plan == .mapTrustingRecord {
            // Taken while in use: should the engine die before the background check confirms
            // the record, the next start verifies the pack in full rather than trusting it again.
            rename(recordPath, recordPath + ".unconfirmed")
        }
        let pack: LanguagePack
        do {
            pack = try LanguagePack(data: bytes, path: path, check: plan == .mapTrustingRecord ? .deferred : .full)
        } catch {
            // A record of a file that is now refused vouches for nothing.
            unlink(recordPath)
            unlink(recordPath + ".unconfirmed")
            throw error
        }
        if plan == .mapAndVerify { dropResidentPages(mapping, count: identity.size) }
        verifyLater(pack, mapping: mapping, plan: plan, identity: identity, record: record)
        englishMapping = PackMapping(pack: pack, address: UInt(bitPattern: mapping), size: identity.size)
        return pack
    }

    /// Where the bundled pack is mapped (the pack held weakly: letting English go frees it).
    final class PackMapping {
        weak var pack: LanguagePack?
        let address: UInt
        let size: Int
        init(pack: LanguagePack, address: UInt, size: Int) {
            self.pack = pack
            self.address = address
            self.size = size
        }
    }
    private static var englishMapping: PackMapping?
    private static var lastKeyMicros = 0
    private static var keyTypedSincePagesDropped = false
    /// Typing paused this long: the mapped pack's pages are given back.
    static let idleBeforeDroppingPagesMicros = 5_000_000

    /// A key was pressed (the engine's key handler): the pack's pages are in use.
    static func noteKey() {
        lastKeyMicros = MemoryDiagnostics.now()
        keyTypedSincePagesDropped = true
    }

    /// When typing has paused, the mapped pack's resident pages leave this process (they stay
    /// in the page cache, shared and reclaimable): typing touches nearly the whole pack within
    /// a few hundred keys (the spelling check walks the vocabulary, the character model probes
    /// its whole table), so without this the pack counts in full in the engine's RSS for good.
    /// The next key maps back what it reads (minor faults, a fraction of a millisecond once).
    /// The same for the pages of the engine's code and its libraries' (`ResidentFilePages`), and
    /// for the heap's free pages.
    static func dropPagesIfIdle() {
        guard keyTypedSincePagesDropped,
            MemoryDiagnostics.now() - lastKeyMicros >= idleBeforeDroppingPagesMicros
        else { return }
        keyTypedSincePagesDropped = false
        ResidentFilePages.drop()
        // Typing's temporary allocations leave free pages inside the heap: they go back too.
        inkling_heap_trim()
        guard let mapping = englishMapping, let pack = mapping.pack,
            let address = UnsafeMutableRawPointer(bitPattern: mapping.address)
        else { return }
        withExtendedLifetime(pack) { dropResidentPages(address, count: mapping.size) }
    }

    /// Once, a moment after the start: the pages only starting touched (opening the pack and
    /// the store, registering with the daemon) leave, typing or not.
    static let startPagesDropDelayMilliseconds: guint = 1500

    /// The mapping as `Data` that unmaps it when the last reference goes. Nonisolated: the
    /// deallocator runs on whichever thread lets the pack go (the background check's, say), and
    /// a closure formed on the main actor would trap there (Swift's isolation check).
    nonisolated static func mappedData(_ mapping: UnsafeMutableRawPointer, count: Int) -> Data {
        Data(
            bytesNoCopy: mapping, count: count, deallocator: .custom({ @Sendable start, count in munmap(start, count) })
        )
    }

    /// Drops a mapping's pages from this process: the pages a check read once stop counting in
    /// its memory; those in use come back from the page cache (the file cannot change).
    nonisolated static func dropResidentPages(_ mapping: UnsafeMutableRawPointer, count: Int) {
        _ = madvise(mapping, count, MADV_DONTNEED)
    }

    /// Off the key path, a few seconds after the pack is opened: the checks a trusted pack
    /// skipped, its SHA-256 against the record, then a fresh record. A pack that fails is
    /// refused (`bundledPackRefused`).
    nonisolated static func verifyLater(
        _ pack: LanguagePack, mapping: UnsafeMutableRawPointer, plan: PackOpening.Plan, identity: PackFileIdentity,
        record: PackVerificationRecord?
    ) {
        let address = UInt(bitPattern: mapping)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 3) {
            guard let mapping = UnsafeMutableRawPointer(bitPattern: address) else { return }
            let started = wallClockNanoseconds()
            var problem: String?
            if plan == .mapTrustingRecord {
                do { try pack.verifyDeferredChecks() } catch { problem = "\(error)" }
            }
            let digest = FileDigest.sha256(bytes: pack.file.mappedBytes)
            if problem == nil, plan == .mapTrustingRecord, digest != record?.sha256 { problem = "SHA-256 mismatch" }
            dropResidentPages(mapping, count: pack.file.size)
            // What start-up allocated and freed (the learned store's rows, the pack's checks)
            // goes back to the system rather than staying in the allocator's free lists.
            trimMallocHeap()
            let recordPath = verificationRecordPath(language: "en")
            unlink(recordPath + ".unconfirmed")
            if let problem {
                unlink(recordPath)
                let refusal = BundledRefusal(pack: pack, reason: problem)
                let box = Unmanaged.passRetained(refusal).toOpaque()
                g_idle_add(
                    { data in
                        guard let data else { return 0 }  // G_SOURCE_REMOVE
                        let refusal = Unmanaged<BundledRefusal>.fromOpaque(data).takeRetainedValue()
                        MainActor.assumeIsolated { PackLoader.bundledPackRefused(refusal) }
                        return 0  // G_SOURCE_REMOVE
                    }, box)
                return
            }
            if let digest, identity == Self.identity(of: pack.path) {
                let fresh = PackVerificationRecord(identity: identity, sha256: digest, verifiedAt: started)
                if PackVerification.isSettled(fresh) { writeRecord(fresh, to: recordPath) }
            }
            // The code this check ran (hashing, the record's file writing: Foundation's) is used
            // once; without this its pages, 64 kB around each one touched, stayed resident until
            // typing paused (issue 18: ~1 MB of the engine's code for someone typing from the start).
            ResidentFilePages.drop()
        }
    }

    /// glibc's `malloc_trim(0)` (not in the Glibc module's headers): returns free heap pages.
    nonisolated static func trimMallocHeap() {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }  // nil: RTLD_DEFAULT
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    final class BundledRefusal: @unchecked Sendable {
        let pack: LanguagePack
        let reason: String
        init(pack: LanguagePack, reason: String) {
            self.pack = pack
            self.reason = reason
        }
    }

    /// The bundled pack in use is not what its record vouched for. Not in use (another language
    /// is active): it is let go, and opened with a full check when English is needed. In use:
    /// the engine restarts (its supervisor starts a fresh one at once), and the fresh engine,
    /// with no record left, checks the pack in full before use, as at any first start: a
    /// corrupt pack is then refused and keys pass through, as they do for one found corrupt at
    /// start. Sessions cannot drop a predictor they hold, so leaving is the one safe way out.
    private static func bundledPackRefused(_ refusal: BundledRefusal) {
        log(
            "the English language pack \(refusal.pack.path) does not match its verification record (\(refusal.reason))"
        )
        if english?.pack === refusal.pack { english = nil }
        guard predictor?.pack === refusal.pack else { return }
        log("restarting the engine to check the English language pack in full before use", priority: .warning)
        LearningBridge.shutdown()
        kill(getpid(), SIGKILL)
    }

    /// Where the record of a language's last verified pack lives (in the user's data folder,
    /// next to the packs, so that it goes wherever they go).
    nonisolated static func verificationRecordPath(language: String) -> String {
        UserPaths.dataFolder() + "/verified/\(language)"
    }

    /// The file's identity from `stat` (nil when it cannot be read).
    nonisolated static func identity(of path: String) -> PackFileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return identity(of: status)
    }

    nonisolated static func identity(of status: stat) -> PackFileIdentity {
        PackFileIdentity(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int(status.st_size),
            modified: Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec),
            changed: Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec))
    }

    nonisolated static func wallClockNanoseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// Writes the record whole or not at all (a temporary file renamed over it); a failure only
    /// means the next load hashes again.
    nonisolated static func writeRecord(_ record: PackVerificationRecord, to path: String) {
        let folder = URL(filePath: path).deletingLastPathComponent().path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let temporary = path + ".tmp\(getpid())"
        do {
            try Data(record.encoded().utf8).write(to: URL(filePath: temporary))
            if rename(temporary, path) != 0 { unlink(temporary) }
        } catch {
            unlink(temporary)
        }
    }
}
