/// Input contexts that stopped reporting their text after they were typed into, by object path.
///
/// Firefox on X11 answers ibus-gtk3's request for the text once wrongly, right after a commit;
/// Debian's ibus-gtk3 then takes the surrounding-text capability away from that GTK input
/// context for good, and Firefox has one context per window: its later fields come with no
/// capability at all. Remembering the context keeps the refusal accurate there ("stopped
/// reporting its text") instead of naming Firefox an application that never reports.
public struct StoppedReportingContexts: Equatable, Sendable {
    private var paths: [String] = []
    /// Contexts remembered at most (oldest forgotten first); contexts are few (one per window).
    static let limit = 64

    /// None remembered.
    public init() {}

    /// The context at `path` stopped reporting.
    public mutating func note(_ path: String) {
        guard !paths.contains(path) else { return }
        paths.append(path)
        if paths.count > Self.limit { paths.removeFirst(paths.count - Self.limit) }
    }

    /// The context at `path` reports again (it offered the capability anew).
    public mutating func forget(_ path: String) { paths.removeAll { $0 == path } }

    /// Whether the context at `path` stopped reporting earlier.
    public func contains(_ path: String) -> Bool { paths.contains(path) }
}

extension InputSession {
    /// After a capability change: remember or forget the focused context as one that stopped.
    func noteReportingOfFocusedContext(has surroundingText: Bool) {
        guard let path = focusClient?.contextPath else { return }
        if surroundingText {
            stoppedReportingContexts.forget(path)
        } else if context.stoppedReporting {
            stoppedReportingContexts.note(path)
        }
    }

    /// At focus-in: a context that stopped reporting in an earlier field is named as such.
    func recallStoppedReporting() {
        guard let path = focusClient?.contextPath, stoppedReportingContexts.contains(path) else { return }
        context.stoppedReportingEarlier()
    }
}
