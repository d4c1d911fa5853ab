/// A misused command line: the sentence to print, and the command whose usage to show.
public struct UsageError: Error, Equatable, Sendable {
    /// One sentence naming the option or value at fault.
    public var message: String
    /// The usage text of the command that was being read.
    public var usage: String
    /// The command's name (`inkling learned list`), for the message prefix and the help hint.
    public var command: String

    /// Creates a usage error about `command`.
    public init(_ message: String, command: CommandSpec) {
        self.message = message
        self.usage = command.usage
        self.command = command.name
    }

    /// What goes to standard error: the command's name, then `explanation` and a newline.
    public var report: String { "\(command): \(explanation)\n" }

    /// The sentence, the usage, and where to find more (without the name: a log adds its own).
    public var explanation: String { "\(message)\n\(usage)\nRun '\(command) --help' for more." }
}

/// What a command line asks for.
public enum Invocation: Sendable {
    /// `-h`/`--help` (or `help`): print this command's help, exit 0.
    case help(CommandSpec)
    /// `--version`: print the version, exit 0.
    case version
    /// Run the command with these arguments.
    case run(ParsedArguments)
}

/// The options and positional arguments of one command line, checked against its `CommandSpec`.
public struct ParsedArguments: Sendable {
    /// The (sub)command that was chosen.
    public var command: CommandSpec
    /// Positional arguments in order (after the subcommand words).
    public var positional: [String] = []
    /// Option values under every name of their option (`-n` and `--count` alike).
    public var values: [String: String] = [:]
    /// Flags given, under every name of their option.
    public var flags: Set<String> = []

    /// The value of an option, if given.
    public func value(_ name: String) -> String? { values[name] }

    /// Whether a flag was given.
    public func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// A whole-number option, checked against `range`; nil when not given.
    public func integer(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = values[name] else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                "\(name) takes a whole number from \(range.lowerBound) to \(range.upperBound)\(quoted(text))",
                command: command)
        }
        return number
    }

    /// A number option (finite), checked against `range`; nil when not given.
    public func number(_ name: String, in range: ClosedRange<Double>) throws(UsageError) -> Double? {
        guard let text = values[name] else { return nil }
        guard let number = Double(text), number.isFinite, range.contains(number) else {
            throw UsageError(
                "\(name) takes a number from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))\(quoted(text))",
                command: command)
        }
        return number
    }

    /// `, not 'VALUE'` for a message, or nothing where the command never quotes arguments.
    func quoted(_ text: String) -> String {
        command.quotesArguments ? ", not '\(Self.shown(text))'" : ""
    }

    /// A value for a message: control characters dropped, long values cut.
    static func shown(_ text: String) -> String {
        let clean = String(
            String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
        return clean.unicodeScalars.count > 40
            ? String(String.UnicodeScalarView(clean.unicodeScalars.prefix(40))) + "…" : clean
    }

    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}

extension CommandSpec {
    /// Reads a command line (without the program name) against this command and its subcommands.
    ///
    /// Conventions: `-h`/`--help` anywhere before `--` asks for help; `--version` for the
    /// version; `--` ends the options (`inkling suggest -- -h`); `--name=value` and
    /// `--name value` are the same; `-` is a positional argument (standard input); a negative
    /// number is a positional argument unless the command has an option of that name; anything
    /// else starting with `-` that the command does not declare is a usage error.
    public func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        if !subcommands.isEmpty {
            guard let first = arguments.first else {
                throw UsageError(
                    "needs a command: \(subcommands.filter { !$0.hidden }.compactMap(\.path.last).joined(separator: ", "))",
                    command: self)
            }
            switch first {
            case "-h", "--help": return .help(self)
            case "--version": return .version
            case "help":
                guard arguments.count > 1 else { return .help(self) }
                guard let sub = subcommand(named: arguments[1]) else {
                    throw UsageError("unknown command '\(ParsedArguments.shown(arguments[1]))'", command: self)
                }
                return .help(sub)
            default: break
            }
            if first.hasPrefix("-") && first != "-" {
                throw UsageError(
                    "unknown option '\(ParsedArguments.shown(first))' (a command comes first)", command: self)
            }
            guard let sub = subcommand(named: first) else {
                let kind = path.count > 1 ? "subcommand" : "command"
                throw UsageError("unknown \(kind) '\(ParsedArguments.shown(first))'", command: self)
            }
            return try sub.parse(Array(arguments.dropFirst()))
        }
        var parsed = ParsedArguments(command: self)
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                parsed.positional.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "-h" || argument == "--help" { return .help(self) }
            if argument == "--version" { return .version }
            var name = argument
            var attached: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                attached = String(argument[argument.index(after: equals)...])
            }
            guard let option = option(named: name) else {
                if Double(argument) != nil {  // `-1`: a value, not an option
                    parsed.positional.append(argument)
                    continue
                }
                throw UsageError("unknown option '\(ParsedArguments.shown(name))'", command: self)
            }
            if let placeholder = option.value {
                let value: String
                if let attached {
                    value = attached
                } else if index < arguments.count {
                    value = arguments[index]
                    index += 1
                } else {
                    throw UsageError("\(name) needs a value (\(placeholder))", command: self)
                }
                for alias in option.names { parsed.values[alias] = value }
                if let range = option.integers { _ = try parsed.integer(name, in: range) }
                if let range = option.numbers { _ = try parsed.number(name, in: range) }
            } else {
                if attached != nil { throw UsageError("\(name) takes no value", command: self) }
                for alias in option.names { parsed.flags.insert(alias) }
            }
        }
        if parsed.positional.count < self.arguments.lowerBound {
            throw UsageError("\(path.last ?? name) needs \(argumentNames)", command: self)
        }
        if parsed.positional.count > self.arguments.upperBound {
            let extra = parsed.positional[self.arguments.upperBound]
            throw UsageError(
                quotesArguments ? "unexpected argument '\(ParsedArguments.shown(extra))'" : "unexpected argument",
                command: self)
        }
        return .run(parsed)
    }

    /// The positional arguments the synopsis names (`KEY and VALUE`): option groups in brackets
    /// and options with their values left out.
    var argumentNames: String {
        var depth = 0
        var outside = ""
        for character in synopsis {
            if character == "[" {
                depth += 1
            } else if character == "]" {
                depth = max(0, depth - 1)
            } else if depth == 0 {
                outside.append(character)
            }
        }
        var names: [String] = []
        var skipValue = false
        for token in outside.split(separator: " ") {
            if token.hasPrefix("-") && token != "-" {
                skipValue = true
            } else if skipValue && token.uppercased() == token {
                skipValue = false
            } else {
                names.append(String(token))
                skipValue = false
            }
        }
        return names.isEmpty ? "an argument" : names.joined(separator: " and ")
    }
}
