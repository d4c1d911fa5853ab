import InklingCore
import Testing

@Suite struct LogDestinationTests {
    @Test func aDiscardedStderrSendsLogsToTheJournal() {
        // ibus-daemon starts its engines (and the engine its cloud helper) with stderr on /dev/null.
        #expect(LogDestination.choose(standardError: .discarded) == .journal)
    }

    @Test func theJournalsOwnStreamGetsStructuredEntries() {
        #expect(LogDestination.choose(standardError: .journalStream) == .journal)
    }

    @Test func aTerminalFileOrPipeKeepsPlainLines() {
        #expect(LogDestination.choose(standardError: .terminal) == .standardError)
        #expect(LogDestination.choose(standardError: .fileOrPipe) == .standardError)
    }
}
