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

    /// The path of the running executable (`/proc/self/exe`), falling back to argv[0].
    public static func currentExecutablePath() -> String {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return resolved
        }
        return CommandLine.arguments.first ?? "."
    }
}
