import FoundationEssentials

/// Finds language packs from the program's own location, never from the working directory.
///
/// Installed, binaries live in `/usr/bin` or `/usr/libexec` and packs in `/usr/share/inkling`;
/// in a checkout, binaries live under `.build/` and packs in `data/packs/`.
public enum PackLocator {
    /// The folders that may hold bundled packs, best first, for an executable at `executablePath`.
    public static func bundledPackFolders(executablePath: String) -> [String] {
        var folders: [String] = []
        var directory = URL(filePath: executablePath).deletingLastPathComponent()
        folders.append(directory.deletingLastPathComponent().appending(path: "share/inkling/packs").path)
        for _ in 0..<6 {
            folders.append(directory.appending(path: "data/packs").path)
            directory = directory.deletingLastPathComponent()
        }
        return folders
    }

    /// The bundled pack for a language, if one exists near the executable.
    public static func bundledPack(language: String, executablePath: String) -> String? {
        for folder in bundledPackFolders(executablePath: executablePath) {
            let path = folder + "/\(language).inkpack"
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        return nil
    }

    /// A pack installed system-wide by a Debian package (`inkling-lang-de`): the pack beside the
    /// bundled ones and its manifest entry in `share/inkling/manifests/<lang>.json`. The
    /// bundled English pack has no such entry and is not one of these.
    public struct SystemPack: Equatable, Sendable {
        /// `<prefix>/share/inkling/packs/<lang>.inkpack`.
        public var packPath: String
        /// `<prefix>/share/inkling/manifests/<lang>.json`: a manifest with this one pack.
        public var manifestPath: String
    }

    /// The system-wide pack of `language`, if a package installed one near the executable.
    /// Callers check the pack against the manifest's size and SHA-256 before using it.
    public static func systemPack(language: String, executablePath: String) -> SystemPack? {
        guard LanguageCode.isValid(language) else { return nil }
        for folder in bundledPackFolders(executablePath: executablePath) {
            let pack = folder + "/\(language).inkpack"
            let manifest = URL(filePath: folder).deletingLastPathComponent().appending(
                path: "manifests/\(language).json"
            ).path
            if FileManager.default.fileExists(atPath: pack), FileManager.default.fileExists(atPath: manifest) {
                return SystemPack(packPath: pack, manifestPath: manifest)
            }
        }
        return nil
    }

    /// Every language with a system-wide pack (see `systemPack`).
    public static func systemPackLanguages(executablePath: String) -> Set<String> {
        var languages: Set<String> = []
        for folder in bundledPackFolders(executablePath: executablePath) {
            let manifests = URL(filePath: folder).deletingLastPathComponent().appending(path: "manifests").path
            for file in (try? FileManager.default.contentsOfDirectory(atPath: manifests)) ?? []
            where file.hasSuffix(".json") {
                let language = String(file.dropLast(".json".count))
                if LanguageCode.isValid(language),
                    FileManager.default.fileExists(atPath: folder + "/\(language).inkpack")
                {
                    languages.insert(language)
                }
            }
        }
        return languages
    }

    /// The manifest entries of every system-wide pack (unreadable manifests are skipped: the
    /// pack then counts as not installed).
    public static func systemPackEntries(executablePath: String) -> [PackManifest.Entry] {
        systemPackLanguages(executablePath: executablePath).sorted().compactMap { language in
            guard let system = systemPack(language: language, executablePath: executablePath),
                let data = try? Data(contentsOf: URL(filePath: system.manifestPath))
            else { return nil }
            return (try? PackManifest.parse(data))?.entry(for: language)
        }
    }

    /// The path of the running executable (`/proc/self/exe`), falling back to argv[0].
    public static func currentExecutablePath() -> String {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return resolved
        }
        return CommandLine.arguments.first ?? "."
    }
}
