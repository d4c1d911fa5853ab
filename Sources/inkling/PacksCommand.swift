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
/// name; a failed or interrupted download never leaves a file under the final name.
enum PacksCommand {
    static func run(_ arguments: Arguments) {
        let rest = Array(arguments.positional.dropFirst())
        switch arguments.positional.first {
        case "list": list(arguments)
        case "install":
            guard let language = rest.first else { fail("packs install needs a language, e.g. 'inkling packs install de'") }
            install(language, arguments)
        case "remove":
            guard let language = rest.first else { fail("packs remove needs a language") }
            remove(language)
        case "verify": verify(rest.first, arguments)
        case "update": update(arguments)
        default: fail("packs needs list, install LANG, remove LANG, verify [LANG] or update", status: 2)
        }
    }

    // MARK: Manifests

    static var packFolder: String { UserPaths.packFolder() }
    static var cachedManifestPath: String { UserPaths.dataFolder() + "/manifest.json" }
    static var cachedManifestSourcePath: String { UserPaths.dataFolder() + "/manifest.source" }

    /// The manifest shipped with this build (next to the bundled packs).
    static func bundledManifest() -> PackManifest? {
        for folder in PackLocator.bundledPackFolders(executablePath: PackLocator.currentExecutablePath()) {
            let path = URL(filePath: folder).deletingLastPathComponent().appending(path: "manifest.json").path
            if let data = try? Data(contentsOf: URL(filePath: path)), let manifest = try? PackManifest.parse(data) { return manifest }
        }
        return nil
    }

    /// The newest manifest known: the one fetched by `update`, else the bundled one.
    static func currentManifest() -> (PackManifest, source: String)? {
        if let data = try? Data(contentsOf: URL(filePath: cachedManifestPath)) {
            do {
                let manifest = try PackManifest.parse(data)
                let source = (try? String(decoding: Data(contentsOf: URL(filePath: cachedManifestSourcePath)), as: UTF8.self)) ?? ""
                return (manifest, source.split(separator: "\n").first.map(String.init) ?? "")
            } catch {
                warn("inkling: ignoring the downloaded manifest: \(error)")
            }
        }
        return bundledManifest().map { ($0, "") }
    }

    static func manifestURL(_ arguments: Arguments) -> String? {
        arguments.options["--manifest-url"] ?? ProcessInfo.processInfo.environment["INKLING_MANIFEST_URL"]
    }

    // MARK: Commands

    static func list(_ arguments: Arguments) {
        guard let (manifest, _) = currentManifest() else {
            print("no pack manifest yet: run 'inkling packs update --manifest-url URL'")
            return
        }
        for entry in manifest.packs.sorted(by: { $0.language < $1.language }) {
            let path = packFolder + "/\(entry.language).inkpack"
            var status = "available"
            if entry.url.isEmpty { status = "bundled" }
            if FileManager.default.fileExists(atPath: path) { status = "installed" }
            if !entry.isSupported { status += ", needs Inkling \(entry.minEngineVersion)" }
            print("\(entry.language)\t\(entry.displayName)\t\(entry.version)\t\(entry.size / 1024) KiB\t\(status)")
        }
    }

    static func update(_ arguments: Arguments) {
        guard let url = manifestURL(arguments), !url.isEmpty else {
            fail("no manifest URL: pass --manifest-url URL or set INKLING_MANIFEST_URL")
        }
        let temporary = temporaryPath(in: UserPaths.dataFolder(), name: "manifest.json")
        if let problem = Downloader.download(url, to: temporary, maximumBytes: 1 << 20, progress: false) {
            unlink(temporary)
            fail("cannot fetch the manifest: \(problem)")
        }
        let data = (try? Data(contentsOf: URL(filePath: temporary))) ?? Data()
        let manifest: PackManifest
        do {
            manifest = try PackManifest.parse(data)
        } catch {
            unlink(temporary)
            fail("\(error)")
        }
        guard durableRename(temporary, to: cachedManifestPath) else {
            unlink(temporary)
            fail("cannot store the manifest in \(UserPaths.dataFolder())")
        }
        try? Data(url.utf8).write(to: URL(filePath: cachedManifestSourcePath), options: .atomic)
        print("manifest updated: \(manifest.packs.count) packs")
    }

    static func install(_ language: String, _ arguments: Arguments) {
        if let url = manifestURL(arguments), !url.isEmpty, arguments.options["--manifest-url"] != nil { update(arguments) }
        guard let (manifest, source) = currentManifest() else { fail("no pack manifest: run 'inkling packs update --manifest-url URL' first") }
        guard let entry = manifest.entry(for: language) else { fail("no pack for '\(language)' in the manifest") }
        guard entry.isSupported else {
            fail("the '\(language)' pack needs Inkling \(entry.minEngineVersion) or newer (this is \(InklingVersion.current))")
        }
        guard !entry.url.isEmpty else { print("\(entry.displayName) is bundled with Inkling; nothing to download"); return }
        let url = resolve(entry.url, against: source)
        let final = packFolder + "/\(language).inkpack"
        let temporary = temporaryPath(in: packFolder, name: "\(language).inkpack")
        // `fail` exits at once, so the temporary file is removed before every failure.
        if let problem = Downloader.download(url, to: temporary, maximumBytes: entry.size, progress: isatty(2) != 0) {
            unlink(temporary)
            fail("download of \(entry.displayName) failed: \(problem); nothing was installed")
        }
        if let problem = check(path: temporary, against: entry) {
            unlink(temporary)
            fail("the downloaded \(entry.displayName) pack was refused: \(problem); nothing was installed")
        }
        guard durableRename(temporary, to: final) else {
            unlink(temporary)
            fail("cannot move the pack into \(packFolder)")
        }
        print("installed \(entry.displayName) (\(entry.language), version \(entry.version))")
    }

    static func remove(_ language: String) {
        let path = packFolder + "/\(language).inkpack"
        guard FileManager.default.fileExists(atPath: path) else { fail("the '\(language)' pack is not installed") }
        // An engine that has the pack mapped keeps reading it until it lets go; the name is gone now.
        guard unlink(path) == 0 else { fail("cannot remove \(path)") }
        print("removed \(language)")
    }

    static func verify(_ language: String?, _ arguments: Arguments) {
        let manifest = currentManifest()?.0
        var languages: [String] = []
        if let language {
            languages = [language]
        } else {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: packFolder)) ?? []
            languages = files.filter { $0.hasSuffix(".inkpack") && !$0.hasPrefix(".") }.map { String($0.dropLast(8)) }.sorted()
        }
        if languages.isEmpty { print("no downloaded packs") }
        var bad = 0
        for language in languages {
            let path = packFolder + "/\(language).inkpack"
            guard FileManager.default.fileExists(atPath: path) else {
                print("\(language): not installed")
                bad += 1
                continue
            }
            guard let entry = manifest?.entry(for: language) else {
                print("\(language): not in the manifest, cannot verify")
                bad += 1
                continue
            }
            if let problem = check(path: path, against: entry) {
                print("\(language): CORRUPT — \(problem)")
                bad += 1
            } else {
                print("\(language): ok (\(entry.displayName) \(entry.version), sha256 \(entry.sha256.prefix(12))…)")
            }
        }
        if bad > 0 { exit(1) }
    }

    // MARK: Checks and files

    /// Size, SHA-256 and structure of a pack file against its manifest entry; nil when it is sound.
    static func check(path: String, against entry: PackManifest.Entry) -> String? {
        var status = stat()
        let size = stat(path, &status) == 0 ? Int(status.st_size) : -1
        guard size == entry.size else { return "size \(size) bytes, expected \(entry.size)" }
        do {
            // One read: the SHA-256 and the structure are checked on the same bytes.
            let data = try PackFile.read(path: path)
            guard data.count == entry.size else { return "size \(data.count) bytes, expected \(entry.size)" }
            guard let digest = data.withUnsafeBytes({ FileDigest.sha256(bytes: $0) }) else { return "cannot read the file" }
            guard digest == entry.sha256 else { return "SHA-256 mismatch" }
            let pack = try LanguagePack(data: data, path: path)
            guard pack.language == entry.language else { return "it is a '\(pack.language)' pack" }
        } catch {
            return "\(error)"
        }
        return nil
    }


    /// A unique temporary name beside the final one (hidden, so listings skip it).
    static func temporaryPath(in folder: String, name: String) -> String {
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder + "/.\(name).part-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
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

    /// A pack URL from the manifest, resolved against the manifest's own URL when relative.
    static func resolve(_ url: String, against source: String) -> String {
        if url.contains("://") || source.isEmpty { return url }
        let base = source.hasSuffix("/") ? source : String(source[..<(source.lastIndex(of: "/") ?? source.endIndex)]) + "/"
        return base + url
    }
}

/// Downloads with libcurl into a file, with an optional progress line on the terminal.
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

    /// nil on success, else why it failed.
    static func download(_ url: String, to path: String, maximumBytes: Int, progress: Bool) -> String? {
        guard let file = fopen(path, "wb") else { return "cannot create \(path)" }
        let context = Context(file: file, maximumBytes: maximumBytes, progress: progress)
        let unmanaged = Unmanaged.passRetained(context)
        defer {
            unmanaged.release()
            fclose(file)
        }
        guard let handle = curl_easy_init() else { return "libcurl failed to start" }
        defer { curl_easy_cleanup(handle) }
        _ = inkling_curl_set_string(handle, CURLOPT_URL, url)
        _ = inkling_curl_set_long(handle, CURLOPT_FAILONERROR, 1)
        _ = inkling_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 1)
        _ = inkling_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = inkling_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, 10_000)
        _ = inkling_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, 512)
        _ = inkling_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, 30)
        _ = inkling_curl_set_write(handle, { data, size, count, user in
            let context = Unmanaged<Context>.fromOpaque(user!).takeUnretainedValue()
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
            _ = inkling_curl_set_xferinfo(handle, { user, total, now, _, _ in
                let context = Unmanaged<Context>.fromOpaque(user!).takeUnretainedValue()
                let expected = total > 0 ? Int(total) : context.maximumBytes
                let percent = expected > 0 ? Int(now) * 100 / expected : 0
                if percent != context.lastPercent {
                    context.lastPercent = percent
                    warnInline("\rdownloading… \(percent) %")
                }
                return 0
            }, unmanaged.toOpaque())
        }
        let code = curl_easy_perform(handle)
        if progress { warnInline("\n") }
        if context.tooLarge { return "the server sent more than the manifest's \(maximumBytes) bytes" }
        guard code == CURLE_OK else { return String(cString: curl_easy_strerror(code)) }
        guard fflush(file) == 0 else { return "cannot write \(path)" }
        return nil
    }

}

/// Writes to standard error without a newline (progress lines).
func warnInline(_ text: String) {
    var line = text
    line.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
}
