import CCurl
import CGio
import FoundationEssentials
import InklingCore
import InklingDigest

#if canImport(Glibc)
    import Glibc
#endif

/// `inkling packs …`: list, install, remove, verify and update downloadable language packs.
///
/// A download goes to a temporary file in the packs folder, is checked for size and SHA-256
/// (GLib's GChecksum) and opened as a pack, flushed to disk, and only then renamed over the final
/// name; a failed or interrupted download never leaves a file under the final name. Temporary
/// files are removed on failure, on SIGINT/SIGTERM/SIGHUP, and — for a process killed outright —
/// by the next `packs` command. Only https:// URLs are fetched (http:// only from this machine),
/// each redirect is checked the same way, and every download has a deadline scaled to its size.
enum PacksCommand {
    static func run(_ arguments: Arguments) {
        let rest = Array(arguments.positional.dropFirst())
        switch arguments.positional.first {
        case "list": list(arguments)
        case "install":
            guard let language = rest.first else {
                fail(tr("packs install needs a language, e.g. 'inkling packs install de'"))
            }
            install(checkedLanguage(language), arguments)
        case "remove":
            guard let language = rest.first else { fail(tr("packs remove needs a language")) }
            remove(checkedLanguage(language))
        case "verify": verify(rest.first.map(checkedLanguage), arguments)
        case "update": update(arguments)
        default: fail(tr("packs needs list, install LANG, remove LANG, verify [LANG] or update"), status: 2)
        }
    }

    /// A language code from the command line, refused (exit status 2) unless it passes the one
    /// shared check: it becomes a file name in the packs folder.
    static func checkedLanguage(_ language: String) -> String {
        if let problem = LanguageCode.problem(language) { fail(problem, status: 2) }
        return language
    }

    // MARK: Manifests

    static var packFolder: String { UserPaths.packFolder() }
    static var cachedManifestPath: String { UserPaths.dataFolder() + "/manifest.json" }
    static var cachedManifestSourcePath: String { UserPaths.dataFolder() + "/manifest.source" }

    /// The manifest shipped with this build (next to the bundled packs).
    static func bundledManifest() -> PackManifest? {
        for folder in PackLocator.bundledPackFolders(executablePath: PackLocator.currentExecutablePath()) {
            let path = URL(filePath: folder).deletingLastPathComponent().appending(path: "manifest.json").path
            if let data = try? Data(contentsOf: URL(filePath: path)), let manifest = try? PackManifest.parse(data) {
                return manifest
            }
        }
        return nil
    }

    /// The newest manifest known: the one fetched by `update`, else the bundled one.
    static func currentManifest() -> (PackManifest, source: String)? {
        if let data = try? Data(contentsOf: URL(filePath: cachedManifestPath)) {
            do {
                let manifest = try PackManifest.parse(data)
                let source =
                    (try? String(decoding: Data(contentsOf: URL(filePath: cachedManifestSourcePath)), as: UTF8.self))
                    ?? ""
                return (manifest, source.split(separator: "\n").first.map(String.init) ?? "")
            } catch {
                warn(
                    "inkling: "
                        + tr(
                            "ignoring the downloaded manifest {path}: {problem}",
                            ["path": cachedManifestPath, "problem": "\(error)"]))
            }
        }
        return bundledManifest().map { ($0, "") }
    }

    /// The manifest's address: `--manifest-url`, else `$INKLING_MANIFEST_URL`, else the
    /// `pack-manifest-url` setting (where a release publishes its packs).
    static func manifestURL(_ arguments: Arguments) -> String? {
        arguments.options["--manifest-url"] ?? ProcessInfo.processInfo.environment["INKLING_MANIFEST_URL"]
            ?? settingManifestURL()
    }

    /// The `pack-manifest-url` setting; nil when the schema is not installed or the value is empty.
    static func settingManifestURL() -> String? {
        guard let source = g_settings_schema_source_get_default(),
            let schema = g_settings_schema_source_lookup(source, "org.freedesktop.ibus.engine.inkling", 1)
        else { return nil }
        defer { g_settings_schema_unref(schema) }
        guard g_settings_schema_has_key(schema, "pack-manifest-url") != 0,
            let settings = g_settings_new_full(schema, nil, nil)
        else {
            return nil
        }
        defer { g_object_unref(settings) }
        guard let value = g_settings_get_string(settings, "pack-manifest-url") else { return nil }
        defer { g_free(value) }
        let url = String(cString: value)
        return url.isEmpty ? nil : url
    }

    // MARK: Commands

    static func list(_ arguments: Arguments) {
        removeAbandonedPartials()
        let current = currentManifest()
        // Packs installed by apt are listed even when the manifest in use does not name them.
        let system = PackLocator.systemPackEntries(executablePath: PackLocator.currentExecutablePath())
        guard current != nil || !system.isEmpty else {
            print(tr("no pack manifest yet: run 'inkling packs update --manifest-url URL'"))
            return
        }
        let known = current?.0.packs ?? []
        let source = current?.source ?? ""
        let entries = known + system.filter { entry in !known.contains { $0.language == entry.language } }
        for entry in entries.sorted(by: { $0.language < $1.language }) {
            let path = packFolder + "/\(entry.language).inkpack"
            var status = "available"
            if entry.url.isEmpty { status = "bundled" }
            if !entry.url.isEmpty, (try? PackDownload.check(PackDownload.resolve(entry.url, against: source))) == nil {
                status = "refused URL (https:// only)"
            }
            if FileManager.default.fileExists(atPath: path) {
                status = "installed"
            } else if PackLocator.systemPack(
                language: entry.language, executablePath: PackLocator.currentExecutablePath()) != nil
            {
                status = "system"
            }
            if !entry.isSupported { status += ", needs Inkling \(entry.minEngineVersion)" }
            print("\(entry.language)\t\(entry.displayName)\t\(entry.version)\t\(entry.size / 1024) KiB\t\(status)")
        }
    }

    static func update(_ arguments: Arguments) {
        guard let url = manifestURL(arguments), !url.isEmpty else {
            fail(tr("no manifest URL: pass --manifest-url URL or set INKLING_MANIFEST_URL"))
        }
        // Checked before anything is created or fetched.
        do { _ = try PackDownload.check(url) } catch { fail(tr("the manifest URL {problem}", ["problem": "\(error)"])) }
        removeAbandonedPartials()
        let temporary = temporaryPath(in: UserPaths.dataFolder(), name: "manifest.json")
        if let problem = Downloader.download(url, to: temporary, maximumBytes: 1 << 20, progress: false) {
            discard(temporary)
            fail(
                tr(
                    "cannot fetch the manifest from {url}: {problem}",
                    ["url": PackDownload.shown(url), "problem": problem]))
        }
        let data = (try? Data(contentsOf: URL(filePath: temporary))) ?? Data()
        let manifest: PackManifest
        do {
            manifest = try PackManifest.parse(data)
        } catch {
            discard(temporary)
            fail(tr("{problem} (from {url})", ["problem": "\(error)", "url": PackDownload.shown(url)]))
        }
        guard durableRename(temporary, to: cachedManifestPath) else {
            discard(temporary)
            fail(tr("cannot store the manifest in {path}", ["path": UserPaths.dataFolder()]))
        }
        PartialFileGuard.release()
        if let problem = PrivateFiles.writeAtomically(Array(url.utf8), to: cachedManifestSourcePath) {
            warn("inkling: \(problem)")
        }
        print(
            trn(
                "manifest updated: {count} pack", "manifest updated: {count} packs", count: manifest.packs.count,
                ["count": "\(manifest.packs.count)"]))
        // Said now, before anyone tries to install them.
        for entry in manifest.packs where !entry.url.isEmpty {
            do { _ = try PackDownload.check(PackDownload.resolve(entry.url, against: url)) } catch {
                warn(
                    "inkling: "
                        + tr(
                            "the '{language}' pack's URL {problem}; it cannot be installed",
                            ["language": entry.language, "problem": "\(error)"]))
            }
        }
    }

    static func install(_ language: String, _ arguments: Arguments) {
        if let url = manifestURL(arguments), !url.isEmpty, arguments.options["--manifest-url"] != nil {
            update(arguments)
        }
        guard let (manifest, source) = currentManifest() else {
            fail(tr("no pack manifest: run 'inkling packs update --manifest-url URL' first"))
        }
        guard let entry = manifest.entry(for: language) else {
            fail(tr("no pack for '{language}' in the manifest", ["language": language]))
        }
        guard entry.isSupported else {
            fail(
                tr(
                    "the '{language}' pack needs Inkling {needed} or newer (this is {current})",
                    ["language": language, "needed": entry.minEngineVersion, "current": InklingVersion.current])
            )
        }
        guard !entry.url.isEmpty else {
            print(tr("{name} is bundled with Inkling; nothing to download", ["name": entry.displayName]))
            return
        }
        let url = PackDownload.resolve(entry.url, against: source)
        // Checked before anything is created or fetched: file:, gopher:, dict:… and clear-text
        // http:// to another machine never reach libcurl.
        do { _ = try PackDownload.check(url) } catch {
            fail(
                tr(
                    "the '{language}' pack's URL {problem}; nothing was installed",
                    ["language": language, "problem": "\(error)"]))
        }
        removeAbandonedPartials()
        let final = packFolder + "/\(language).inkpack"
        let temporary = temporaryPath(in: packFolder, name: "\(language).inkpack")
        // `fail` exits at once, so the temporary file is removed before every failure.
        if let problem = Downloader.download(url, to: temporary, maximumBytes: entry.size, progress: isatty(2) != 0) {
            discard(temporary)
            fail(
                tr(
                    "download of {name} failed: {problem}; nothing was installed",
                    ["name": entry.displayName, "problem": problem]))
        }
        if let problem = check(path: temporary, against: entry) {
            discard(temporary)
            fail(
                tr(
                    "the downloaded {name} pack was refused: {problem}; nothing was installed",
                    ["name": entry.displayName, "problem": problem]))
        }
        guard durableRename(temporary, to: final) else {
            discard(temporary)
            fail(tr("cannot move the pack into {path}", ["path": packFolder]))
        }
        PartialFileGuard.release()
        print(
            tr(
                "installed {name} ({language}, version {version})",
                ["name": entry.displayName, "language": entry.language, "version": entry.version]))
    }

    static func remove(_ language: String) {
        let path = packFolder + "/\(language).inkpack"
        guard FileManager.default.fileExists(atPath: path) else {
            fail(tr("the '{language}' pack is not installed", ["language": language]))
        }
        // An engine that has the pack mapped keeps reading it until it lets go; the name is gone now.
        guard unlink(path) == 0 else {
            fail(
                tr("cannot remove {path}: {problem}", ["path": path, "problem": FileProblem.reason(posixCode: errno)]))
        }
        print(tr("removed {language}", ["language": language]))
    }

    static func verify(_ language: String?, _ arguments: Arguments) {
        let manifest = currentManifest()?.0
        var languages: [String] = []
        if let language {
            languages = [language]
        } else {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: packFolder)) ?? []
            // Only names a language code could make: anything else in the folder is not ours.
            languages = files.filter { $0.hasSuffix(".inkpack") }.map { String($0.dropLast(8)) }.filter(
                LanguageCode.isValid
            ).sorted()
        }
        if languages.isEmpty { print(tr("no downloaded packs")) }
        var bad = 0
        for language in languages {
            let path = packFolder + "/\(language).inkpack"
            guard FileManager.default.fileExists(atPath: path) else {
                print(tr("{language}: not installed", ["language": language]))
                bad += 1
                continue
            }
            guard let entry = manifest?.entry(for: language) else {
                print(tr("{language}: not in the manifest, cannot verify", ["language": language]))
                bad += 1
                continue
            }
            if let problem = check(path: path, against: entry) {
                print(tr("{language}: CORRUPT — {problem}", ["language": language, "problem": problem]))
                bad += 1
            } else {
                print(
                    tr(
                        "{language}: ok ({name} {version}, sha256 {sha256}…)",
                        [
                            "language": language, "name": entry.displayName, "version": entry.version,
                            "sha256": String(entry.sha256.prefix(12)),
                        ]))
            }
        }
        if bad > 0 { exit(1) }
    }

    // MARK: Checks and files

    /// Size, SHA-256 and structure of a pack file against its manifest entry; nil when it is sound.
    static func check(path: String, against entry: PackManifest.Entry) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return "cannot read \(path): \(FileProblem.reason(posixCode: errno))" }
        guard status.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
        let size = Int(status.st_size)
        guard size == entry.size else { return "size \(size) bytes, expected \(entry.size)" }
        do {
            // One read: the SHA-256 and the structure are checked on the same bytes.
            let data = try PackFile.read(path: path)
            let sha256 = { (bytes: Data) in bytes.withUnsafeBytes { FileDigest.sha256(bytes: $0) } }
            if case .failure(let refusal) = PackVerifier.verify(data, against: entry, path: path, sha256: sha256) {
                return refusal.reason
            }
        } catch {
            return "\(error)"
        }
        return nil
    }

    /// A unique temporary name beside the final one (hidden, so listings skip it), in a folder
    /// created 0700; removed by a signal handler if the command is interrupted.
    static func temporaryPath(in folder: String, name: String) -> String {
        if let problem = PrivateFiles.makeFolder(folder) { fail(problem) }
        let path =
            folder + "/"
            + PackDownload.partialName(for: name, processID: getpid(), nonce: UInt32.random(in: 0...UInt32.max))
        PartialFileGuard.protect(path)
        return path
    }

    /// Removes a temporary file and stops guarding it.
    static func discard(_ temporary: String) {
        unlink(temporary)
        PartialFileGuard.release()
    }

    /// Removes the partial downloads of `inkling` processes that no longer run (killed before
    /// they could clean up). Another install running now keeps its file.
    static func removeAbandonedPartials() {
        for folder in [UserPaths.dataFolder(), packFolder] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for name in names where PackDownload.isAbandonedPartial(name, isRunning: isRunning) {
                unlink(folder + "/" + name)
            }
        }
    }

    static func isRunning(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }

    /// fsync the file, rename it over the final name, fsync the folder.
    static func durableRename(_ from: String, to: String) -> Bool {
        let fd = open(from, O_RDONLY)
        guard fd >= 0 else { return false }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced, rename(from, to) == 0 else { return false }
        let folder = open(URL(filePath: to).deletingLastPathComponent().path, O_RDONLY)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
        return true
    }

}

/// Removes the one temporary file being written when SIGINT, SIGTERM or SIGHUP arrives, then
/// lets the signal end the process as usual.
enum PartialFileGuard {
    /// The path, as a C string the handler can use (only async-signal-safe calls there).
    nonisolated(unsafe) private static var current: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var installed = false
    private static let signals = [SIGINT, SIGTERM, SIGHUP]

    static func protect(_ path: String) {
        let previous = current
        if !installed {
            installed = true
            for signalNumber in signals {
                signal(signalNumber) { received in
                    if let path = PartialFileGuard.current { unlink(path) }
                    signal(received, SIG_DFL)
                    raise(received)
                }
            }
        }
        current = strdup(path)
        free(previous)
    }

    static func release() {
        let previous = current
        current = nil
        free(previous)
    }
}

/// Downloads with libcurl into a file, with an optional progress line on the terminal.
///
/// libcurl is allowed exactly the one protocol the checked URL uses, follows no redirect by
/// itself (each Location is checked by `PackDownload.check` before it is fetched), and the
/// whole transfer, redirects included, has a deadline scaled to the expected size.
enum Downloader {
    final class Context {
        let file: UnsafeMutablePointer<FILE>
        let maximumBytes: Int
        var written = 0
        var tooLarge = false
        let progress: Bool
        var lastPercent = -1
        init(file: UnsafeMutablePointer<FILE>, maximumBytes: Int, progress: Bool) {
            self.file = file
            self.maximumBytes = maximumBytes
            self.progress = progress
        }
    }

    /// The fixed part of a download's deadline; `INKLING_DOWNLOAD_BASE_SECONDS` (1–3600)
    /// overrides it (tests use a short one).
    static var baseSeconds: Int {
        if let text = ProcessInfo.processInfo.environment["INKLING_DOWNLOAD_BASE_SECONDS"], let value = Int(text),
            (1...3600).contains(value)
        {
            return value
        }
        return 60
    }

    /// nil on success, else why it failed (one phrase, for "download failed: …").
    static func download(_ url: String, to path: String, maximumBytes: Int, progress: Bool) -> String? {
        let fd = PrivateFiles.createFile(path)
        guard fd >= 0, let file = fdopen(fd, "wb") else {
            let reason = FileProblem.reason(posixCode: errno)
            if fd >= 0 { close(fd) }
            return "cannot create \(path): \(reason)"
        }
        let context = Context(file: file, maximumBytes: maximumBytes, progress: progress)
        let unmanaged = Unmanaged.passRetained(context)
        defer {
            unmanaged.release()
            fclose(file)
        }
        guard let handle = curl_easy_init() else { return "libcurl failed to start" }
        defer { curl_easy_cleanup(handle) }
        let deadlineMilliseconds =
            PackDownload.deadlineSeconds(expectedBytes: maximumBytes, baseSeconds: baseSeconds) * 1000
        let started = monotonicMilliseconds()
        var current = url
        for _ in 0...PackDownload.maximumRedirects {
            let scheme: PackDownload.Scheme
            do { scheme = try PackDownload.check(current) } catch {
                return current == url ? "\(error)" : "the redirect to \(error)"
            }
            // A redirect's body (or a first try's) must not end up in the file.
            guard fflush(file) == 0, ftruncate(fileno(file), 0) == 0 else { return "cannot write \(path)" }
            rewind(file)
            context.written = 0
            let remaining = deadlineMilliseconds - (monotonicMilliseconds() - started)
            guard remaining > 0 else { return "it took longer than \(deadlineMilliseconds / 1000) s" }

            curl_easy_reset(handle)
            _ = inkling_curl_set_string(handle, CURLOPT_URL, current)
            _ = inkling_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, scheme.rawValue)
            _ = inkling_curl_set_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "https")
            _ = inkling_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
            if scheme == .loopbackHTTP { _ = inkling_curl_set_string(handle, CURLOPT_NOPROXY, "*") }
            _ = inkling_curl_set_long(handle, CURLOPT_FAILONERROR, 1)
            _ = inkling_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
            _ = inkling_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, min(10_000, remaining))
            _ = inkling_curl_set_long(handle, CURLOPT_TIMEOUT_MS, remaining)
            _ = inkling_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, 512)
            _ = inkling_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, 30)
            _ = inkling_curl_set_write(
                handle,
                { data, size, count, user in
                    guard let user else { return 0 }  // Abort; the context is always passed below.
                    let context = Unmanaged<Context>.fromOpaque(user).takeUnretainedValue()
                    let bytes = size * count
                    if context.written + bytes > context.maximumBytes {
                        context.tooLarge = true
                        return 0  // Abort: larger than the manifest says.
                    }
                    let wrote = fwrite(data, 1, bytes, context.file)
                    context.written += wrote
                    return wrote
                }, unmanaged.toOpaque())
            if progress {
                _ = inkling_curl_set_xferinfo(
                    handle,
                    { user, total, now, _, _ in
                        guard let user else { return 0 }
                        let context = Unmanaged<Context>.fromOpaque(user).takeUnretainedValue()
                        let expected = total > 0 ? Int(total) : context.maximumBytes
                        let percent = expected > 0 ? Int(now) * 100 / expected : 0
                        if percent != context.lastPercent {
                            context.lastPercent = percent
                            warnInline("\r" + tr("downloading… {percent} %", ["percent": "\(percent)"]))
                        }
                        return 0
                    }, unmanaged.toOpaque())
            }
            let code = curl_easy_perform(handle)
            if progress { warnInline("\n") }
            if context.tooLarge { return "the server sent more than the manifest's \(maximumBytes) bytes" }
            switch code {
            case CURLE_OK: break
            case CURLE_OPERATION_TIMEDOUT:
                return
                    "it took longer than \(deadlineMilliseconds / 1000) s or stalled (the deadline grows with the pack's size)"
            case CURLE_HTTP_RETURNED_ERROR: return "the server answered HTTP \(inkling_curl_response_code(handle))"
            case CURLE_UNSUPPORTED_PROTOCOL: return "the protocol of \(PackDownload.shown(current)) is not allowed"
            default: return String(cString: curl_easy_strerror(code))
            }
            let status = inkling_curl_response_code(handle)
            guard (300..<400).contains(status) else {
                guard fflush(file) == 0 else { return "cannot write \(path)" }
                return nil
            }
            guard let location = inkling_curl_redirect_url(handle) else {
                return "the server answered HTTP \(status) without a usable Location"
            }
            current = String(cString: location)
        }
        return "more than \(PackDownload.maximumRedirects) redirects"
    }

    /// Milliseconds on a clock that never goes back.
    static func monotonicMilliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int(now.tv_sec) * 1000 + Int(now.tv_nsec) / 1_000_000
    }
}

/// Writes to standard error without a newline (progress lines).
func warnInline(_ text: String) {
    var line = text
    line.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
}
