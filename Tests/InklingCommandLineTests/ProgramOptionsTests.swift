import InklingCommandLine
import Testing

/// A helper's options as the helpers write them: the command line once, values read in `init`.
private struct SampleOptions: ProgramOptions, Equatable {
    var rate = 16
    var fast = false

    static let command = CommandSpec(
        ["sample-helper"], synopsis: "[--rate N] [--fast]", summary: "A helper.",
        options: [OptionSpec("--rate", value: "N", help: "how fast"), OptionSpec("--fast", help: "faster")])

    init() {}

    init(_ parsed: ParsedArguments) throws(UsageError) {
        if let rate = try parsed.integer("--rate", in: 1...100) { self.rate = rate }
        fast = parsed.has("--fast")
        if fast && rate < 10 { throw Self.usageError("--fast needs --rate 10 or more") }
    }
}

@Suite("ProgramOptions")
struct ProgramOptionsTests {
    @Test func valuesAreReadByTheProgramsOwnInit() throws {
        #expect(try SampleOptions.parse([]) == SampleOptions())
        #expect(try SampleOptions.parse(["--rate", "20", "--fast"]).fast)
    }

    @Test func theParsersAndTheProgramsUsageErrorsNameTheProgram() {
        #expect(throws: UsageError("unknown option '--slow'", command: SampleOptions.command)) {
            try SampleOptions.parse(["--slow"])
        }
        #expect(throws: UsageError("--fast needs --rate 10 or more", command: SampleOptions.command)) {
            try SampleOptions.parse(["--rate", "5", "--fast"])
        }
    }

    @Test func helpAndVersionDoNotRunTheProgram() {
        #expect(throws: UsageError.self) { try SampleOptions.parse(["--help"]) }
        #expect(throws: UsageError.self) { try SampleOptions.parse(["--version"]) }
    }

    /// The helpers log `explanation` (their log adds the name); a terminal gets `report`.
    @Test func theReportIsTheNameAndTheExplanation() {
        let error = SampleOptions.usageError("--fast needs --rate 10 or more")
        #expect(
            error.explanation
                == "--fast needs --rate 10 or more\nusage: sample-helper [--rate N] [--fast]\nRun 'sample-helper --help' for more."
        )
        #expect(error.report == "sample-helper: " + error.explanation + "\n")
    }
}
