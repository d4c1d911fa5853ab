import InklingCommandLine
import Testing

@Suite("CommandSpec.parse")
struct ParserTests {
    static let suggest = CommandSpec(
        ["tool", "suggest"], synopsis: "[-n N] TEXT...", summary: "Suggests.",
        options: [OptionSpec("-n", "--count", value: "N", help: "how many"), OptionSpec("--quiet", help: "say less")],
        arguments: 0...Int.max)
    static let tool = CommandSpec(
        ["tool"], summary: "A tool.",
        subcommands: [
            suggest,
            CommandSpec(
                ["tool", "wipe"], summary: "Wipes.", options: [OptionSpec("-y", "--yes", help: "no question")]),
        ])

    func run(_ arguments: [String]) throws -> ParsedArguments {
        guard case .run(let parsed) = try Self.tool.parse(arguments) else {
            throw UsageError("not a run", command: Self.tool)
        }
        return parsed
    }

    func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try Self.tool.parse(arguments)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func helpIsRecognisedOnEveryCommandInsteadOfBeingAnArgument() throws {
        for arguments in [
            ["-h"], ["--help"], ["help"], ["suggest", "-h"], ["suggest", "the", "qui", "--help"], ["wipe", "-h"],
            ["help", "wipe"],
        ] {
            guard case .help(let command) = try Self.tool.parse(arguments) else {
                Issue.record("\(arguments) did not ask for help")
                continue
            }
            #expect(command.path.count == (arguments.count == 1 ? 1 : 2), "\(arguments)")
        }
        guard case .version = try Self.tool.parse(["suggest", "--version"]) else {
            Issue.record("--version")
            return
        }
    }

    @Test func doubleDashEndsTheOptions() throws {
        #expect(try run(["suggest", "--", "-h", "--count"]).positional == ["-h", "--count"])
    }

    @Test func valuesAttachedOrSeparateAndKnownUnderEveryName() throws {
        let separate = try run(["suggest", "-n", "3", "the", "qui"])
        #expect(separate.value("--count") == "3" && separate.value("-n") == "3")
        #expect(separate.positional == ["the", "qui"])
        #expect(try run(["suggest", "--count=4"]).value("-n") == "4")
        #expect(try run(["wipe", "-y"]).has("--yes"))
    }

    @Test func unknownOptionsAndBadArgumentsAreUsageErrorsNamingTheValue() {
        #expect(usageError(["suggest", "--bogus"]) == "unknown option '--bogus'")
        #expect(usageError(["suggest", "--bogus=1"]) == "unknown option '--bogus'")
        #expect(usageError(["suggest", "-n"]) == "-n needs a value (N)")
        #expect(usageError(["suggest", "--quiet=yes"]) == "--quiet takes no value")
        #expect(usageError(["frobnicate"]) == "unknown command 'frobnicate'")
        let group = CommandSpec(["tool", "group"], summary: "", subcommands: [Self.suggest])
        #expect(throws: UsageError("unknown subcommand 'x'", command: group)) { try group.parse(["x"]) }
        let set = CommandSpec(["tool", "set"], synopsis: "KEY VALUE [--db PATH]", summary: "", arguments: 2...2)
        #expect(throws: UsageError("set needs KEY and VALUE", command: set)) { try set.parse(["k"]) }
        #expect(usageError(["--bogus"])?.hasPrefix("unknown option '--bogus'") == true)
        #expect(usageError([]) == "needs a command: suggest, wipe")
        #expect(usageError(["wipe", "extra"]) == "unexpected argument 'extra'")
    }

    @Test func negativeNumbersAreValuesAndDashIsStandardInput() throws {
        #expect(try run(["suggest", "-1", "-"]).positional == ["-1", "-"])
    }

    @Test func numbersAreCheckedAgainstTheirRange() throws {
        let parsed = try run(["suggest", "-n", "55296"])
        #expect(throws: UsageError.self) { try parsed.integer("-n", in: 1...50) }
        #expect(throws: UsageError.self) { try run(["suggest", "-n", "-3"]).integer("-n", in: 1...50) }
        #expect(throws: UsageError.self) { try run(["suggest", "-n", "x"]).integer("-n", in: 1...50) }
        #expect(throws: UsageError.self) { try run(["suggest", "-n", "nan"]).number("-n", in: 0...1) }
        #expect(throws: UsageError.self) { try run(["suggest", "-n", "1e300"]).number("-n", in: 0...1e9) }
        #expect(try run(["suggest", "-n", "7"]).integer("-n", in: 1...50) == 7)
        #expect(try run(["suggest", "-n", "0.5"]).number("-n", in: 0...1) == 0.5)
        do {
            _ = try parsed.integer("-n", in: 1...50)
        } catch {
            #expect(error.message == "-n takes a whole number from 1 to 50, not '55296'")
            #expect(error.report.hasPrefix("tool suggest: -n takes"))
            #expect(error.report.contains("usage: tool suggest [-n N] TEXT..."))
        }
    }

    @Test func aCommandThatMustNotQuoteArgumentsDoesNot() {
        var secretive = CommandSpec(
            ["helper"], summary: "A helper.", options: [OptionSpec("--timeout", value: "N", help: "ms")])
        secretive.quotesArguments = false
        #expect(throws: UsageError("unexpected argument", command: secretive)) { try secretive.parse(["sk-secret"]) }
        do {
            guard case .run(let parsed) = try secretive.parse(["--timeout", "sk-secret"]) else { return }
            _ = try parsed.integer("--timeout", in: 1...5)
            Issue.record("accepted")
        } catch {
            #expect(!error.message.contains("sk-secret"))
        }
    }

    @Test func helpListsCommandsOptionsAndExitStatus() {
        let help = Self.tool.helpText
        #expect(help.hasPrefix("usage: tool suggest [-n N] TEXT...\n       tool wipe\n"))
        #expect(help.contains("  suggest  Suggests.\n"))
        #expect(help.contains("exit status: 0 success, 1 failure, 2 usage error"))
        let leaf = Self.suggest.helpText
        #expect(leaf.contains("  -n, --count N"))
        #expect(leaf.contains("  -h, --help"))
        #expect(leaf.contains("  --version"))
    }
}

@Suite("LineSplitter (shared)")
struct SharedLineSplitterTests {
    @Test func anOversizedLineIsCountedNotKeptAndTheNextLineIsIntact() {
        var splitter = LineSplitter(limit: 8)
        var items = splitter.feed(Array("0123456789abcdef".utf8))
        #expect(items.isEmpty)
        items = splitter.feed(Array("xyz\nok\r\n".utf8))
        #expect(items == [.oversized(19), .line(Array("ok".utf8))])
    }

    @Test func theLastLineWithoutANewlineIsKeptAtTheEnd() {
        var splitter = LineSplitter(limit: 8)
        #expect(splitter.feed(Array("a\nbc".utf8)) == [.line(Array("a".utf8))])
        #expect(splitter.finish() == .line(Array("bc".utf8)))
        #expect(splitter.finish() == nil)
        _ = splitter.feed(Array("0123456789".utf8))
        #expect(splitter.finish() == .oversized(10))
    }

    @Test func aLineIsKnownToBeOversizedBeforeItsNewlineArrives() {
        var splitter = LineSplitter(limit: 4)
        #expect(splitter.feed(Array("abcd".utf8)).isEmpty)
        #expect(!splitter.isDiscardingLine, "exactly the limit is allowed")
        #expect(splitter.feed(Array("e".utf8)).isEmpty)
        #expect(splitter.isDiscardingLine)
        #expect(splitter.feed(Array("\nok\n".utf8)) == [.oversized(5), .line(Array("ok".utf8))])
        #expect(!splitter.isDiscardingLine)
    }
}
