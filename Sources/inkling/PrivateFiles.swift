import FoundationEssentials
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Folders and files the `inkling` command creates in the user's data folder: folders 0700 and
/// files 0600 whatever the umask (under `umask 000` the defaults would be 0777 and 0666, and the
/// data folder also holds the learned words).
enum PrivateFiles {
    static let folderMode: mode_t = 0o700
    static let fileMode: mode_t = 0o600

    /// Creates `path` and any missing parent folders, each 0700 (`mkdir -p`); nil on success,
    /// else one sentence saying why not. Folders that already exist are left as they are.
    static func makeFolder(_ path: String) -> String? {
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            partial += "/" + component
            if mkdir(partial, folderMode) == 0 {
                // mkdir's mode passes through the umask; set it exactly.
                _ = chmod(partial, folderMode)
            } else if errno != EEXIST {
                return "cannot create the folder \(partial): \(FileProblem.reason(posixCode: errno))"
            }
        }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            return "cannot use \(path): it is not a folder"
        }
        return nil
    }

    /// Creates a new file (failing if the name exists), mode 0600; the descriptor, or -1 with errno set.
    static func createFile(_ path: String) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, fileMode)
        if fd >= 0 { _ = fchmod(fd, fileMode) }
        return fd
    }

    /// Replaces `path` with `bytes` (a 0600 temporary beside it, flushed, then renamed); nil on
    /// success, else one sentence saying why not.
    static func writeAtomically(_ bytes: some Collection<UInt8>, to path: String) -> String? {
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        if let problem = makeFolder(folder.isEmpty ? "/" : folder) { return problem }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let temporary =
            (folder.isEmpty ? "" : folder) + "/"
            + PackDownload.partialName(for: name, processID: getpid(), nonce: UInt32.random(in: 0...UInt32.max))
        let fd = createFile(temporary)
        guard fd >= 0 else { return "cannot write \(path): \(FileProblem.reason(posixCode: errno))" }
        let array = Array(bytes)
        var offset = 0
        var failure: Int32 = 0
        while offset < array.count {
            let wrote = array[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if wrote < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            offset += wrote
        }
        if failure == 0, fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            return "cannot write \(path): \(FileProblem.reason(posixCode: failure))"
        }
        return nil
    }
}
