import FoundationEssentials
import InklingCommandLine
import InklingCore
import InklingSetupModel
import InklingStore

#if canImport(Glibc)
    import Glibc
#endif

/// Reads the engine's heartbeat file (`Heartbeat`) and checks its process.
enum HeartbeatProbe {
    static func status() -> Heartbeat.Status {
        guard let path = Heartbeat.path(runtimeDirectory: getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }) else {
            return .notRunning
        }
        var info = stat()
        guard stat(path, &info) == 0, let data = FileManager.default.contents(atPath: path) else { return .notRunning }
        let pid = Heartbeat.processID(in: String(decoding: data, as: UTF8.self))
        let runs = pid.map { kill($0, 0) == 0 || errno == EPERM } ?? false
        return Heartbeat.status(modified: Int64(info.st_mtim.tv_sec), now: Int64(time(nil)), processRuns: runs)
    }
}

/// Reads the cloud helper's last-check status file (`CloudStatus`).
enum CloudStatusProbe {
    static func report() -> CloudStatus.Report {
        let path = CloudStatus.path(runtimeDirectory: getenv("XDG_RUNTIME_DIR").map { String(cString: $0) })
        // One byte more than a record may have: a longer file is not a record.
        let file = path.flatMap { RuntimeFile.read(path: $0, limit: CloudStatus.maximumBytes + 1) }
        return CloudStatus.report(text: file?.text, now: Int64(time(nil)))
    }
}

/// The folders and files the About page names.
enum DataLocations {
    static func rows() -> [(String, String)] {
        [
            (tr("Learned words"), UserStore.defaultPath()),
            (tr("Downloaded language packs"), UserPaths.packFolder()),
            (tr("Settings"), "GSettings: org.freedesktop.ibus.engine.inkling (inkling config list)"),
            (tr("Cloud check key and sign-in token"), "your keyring (Secret Service)"),
        ]
    }
}
