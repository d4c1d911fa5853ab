import FoundationEssentials
import InklingCommandLine
import InklingCore
import InklingStore

#if canImport(Glibc)
    import Glibc
#endif

extension LearnedCommand {
    /// Gives `predictor` the learned words of the user store, as the engine's predictor has them:
    /// through `Predictor.replaceUserModel(with:)`, the call the engine makes when the store
    /// changes under it. The default store is read only if it exists (a suggestion never creates
    /// one); a store named with `--db` must exist. A damaged or unreadable default store is
    /// reported and skipped, never repaired from here.
    static func loadLearnedWords(into predictor: Predictor, explicitPath: String?) {
        let path = explicitPath ?? UserStore.defaultPath()
        guard FileManager.default.fileExists(atPath: path) else {
            if explicitPath != nil { fail(tr("there is no user store at {path}", ["path": path])) }
            return
        }
        do {
            let store = try UserStore.open(path: path, recoverCorrupt: false)
            predictor.replaceUserModel(with: try store.loadAll())
        } catch {
            if explicitPath != nil { fail("\(error)") }
            warn("inkling: " + tr("suggesting without learned words: {problem}", ["problem": "\(error)"]))
        }
    }

    /// `learned wipe` forgets everything: on a terminal it asks first (unless `--yes`); without a
    /// terminal it refuses unless `--yes`, so that a script never wipes by accident.
    static func confirmWipe(path: String, _ arguments: Arguments) {
        if arguments.flags.contains("--yes") { return }
        guard Terminal.inputIsTerminal else {
            arguments.usageError(tr("wiping needs --yes when standard input is not a terminal; nothing was wiped"))
        }
        let copies = UserStore.leftoverCopies(of: path).count
        let question =
            copies == 0
            ? tr("Forget every learned word in {path}? This cannot be undone.", ["path": path])
            : trn(
                "Forget every learned word in {path} and the {count} moved-aside damaged copy beside it? This cannot be undone.",
                "Forget every learned word in {path} and the {count} moved-aside damaged copies beside it? This cannot be undone.",
                count: copies, ["path": path, "count": "\(copies)"])
        guard Terminal.confirm(question) else { fail(tr("nothing was wiped")) }
    }
}
