import InklingCore

/// One option a command accepts: a flag, or a name followed by a value (`--pack PATH`).
public struct OptionSpec: Sendable {
    /// The names, short first when there is one: `["-n"]`, `["-y", "--yes"]`.
    public var names: [String]
    /// The value's placeholder (`PATH`, `N`); nil for a flag.
    public var value: String?
    /// One line for `--help`.
    public var help: String
    /// Left out of `--help` and the man page (test and benchmark knobs).
    public var hidden: Bool
    /// For a whole-number option: the values allowed (checked when the command line is read).
    public var integers: ClosedRange<Int>?
    /// For a number option: the values allowed (finite, checked when the command line is read).
    public var numbers: ClosedRange<Double>?

    /// Creates an option.
    public init(
        _ names: String..., value: String? = nil, help: String, integers: ClosedRange<Int>? = nil,
        numbers: ClosedRange<Double>? = nil, hidden: Bool = false
    ) {
        self.names = names
        self.value = value
        self.help = help
        self.integers = integers
        self.numbers = numbers
        self.hidden = hidden
    }

    /// The name results are keyed by: the last (longest) one.
    public var key: String { names.last ?? "" }
}

/// A command or subcommand: its synopsis, options, positional arguments and subcommands.
///
/// Every command of the three executables is described this way, so that they all follow the
/// same conventions: `-h`/`--help` and `--version` everywhere, `--` ends the options, unknown
/// options are usage errors (exit status 2), and the same help layout.
public struct CommandSpec: Sendable {
    /// The words that invoke it: `["inkling", "learned", "list"]`.
    public var path: [String]
    /// What follows the path in the usage line: `"TEXT... [-n N] [--pack PATH]"`.
    public var synopsis: String
    /// One sentence for `--help` and the parent's list of commands.
    public var summary: String
    public var options: [OptionSpec]
    /// How many positional arguments it takes.
    public var arguments: ClosedRange<Int>
    public var subcommands: [CommandSpec]
    /// More text for `--help` (after the options).
    public var details: String
    /// Left out of the parent's list of commands.
    public var hidden: Bool
    /// Whether usage errors may quote the arguments; false where an argument could be a secret
    /// pasted in the wrong place (the cloud helper), so that it never reaches a log.
    public var quotesArguments = true

    /// Creates a command.
    public init(
        _ path: [String], synopsis: String = "", summary: String, options: [OptionSpec] = [],
        arguments: ClosedRange<Int> = 0...0,
        subcommands: [CommandSpec] = [], details: String = "", hidden: Bool = false
    ) {
        self.path = path
        self.synopsis = synopsis
        self.summary = summary
        self.options = options
        self.arguments = arguments
        self.subcommands = subcommands
        self.details = details
        self.hidden = hidden
    }

    /// `inkling learned list`.
    public var name: String { path.joined(separator: " ") }

    /// The line every command's `--help` ends with (and the man page repeats).
    public static var exitStatusLine: String {
        tr("exit status: 0 success, 1 failure, 2 usage error (unknown option, missing or invalid argument)")
    }

    /// The `--help` and `--version` options every command has.
    public static var standardOptions: [OptionSpec] {
        [
            OptionSpec("-h", "--help", help: tr("show this help and exit")),
            OptionSpec("--version", help: tr("show the version and exit")),
        ]
    }

    /// The usage lines: its synopsis, or else one per visible subcommand.
    public var usageLines: [String] {
        let visible = subcommands.filter { !$0.hidden }
        if !visible.isEmpty && synopsis.isEmpty { return visible.flatMap(\.usageLines) }
        return [synopsis.isEmpty ? name : name + " " + synopsis]
    }

    /// `usage: …` with one line per form (the forms line up under the first, whatever the
    /// translation of "usage:").
    public var usage: String {
        let label = tr("usage:") + " "
        let indent = String(repeating: " ", count: label.count)
        return usageLines.enumerated().map { index, line in (index == 0 ? label : indent) + line }.joined(
            separator: "\n")
    }

    /// The full `--help` text.
    public var helpText: String {
        var text = usage + "\n\n" + Self.wrap(summary) + "\n"
        let visibleCommands = subcommands.filter { !$0.hidden }
        if !visibleCommands.isEmpty {
            text += "\n" + tr("commands:") + "\n"
            let width = visibleCommands.map { $0.path.last?.count ?? 0 }.max() ?? 0
            for command in visibleCommands {
                let word = command.path.last ?? ""
                text +=
                    Self.wrap(
                        "  " + word + String(repeating: " ", count: width - word.count + 2) + command.summary,
                        hanging: width + 4) + "\n"
            }
            text += tr("Run '{command} COMMAND --help' for a command's options.", ["command": name]) + "\n"
        }
        let visibleOptions = options.filter { !$0.hidden } + Self.standardOptions
        text += "\n" + tr("options:") + "\n"
        let labels = visibleOptions.map { option in
            option.names.joined(separator: ", ") + (option.value.map { " " + $0 } ?? "")
        }
        let width = min(28, labels.map(\.count).max() ?? 0)
        for (label, option) in zip(labels, visibleOptions) {
            if label.count > width {
                text +=
                    "  " + label + "\n"
                    + Self.wrap(String(repeating: " ", count: width + 4) + option.help, hanging: width + 4) + "\n"
            } else {
                text +=
                    Self.wrap(
                        "  " + label + String(repeating: " ", count: width - label.count + 2) + option.help,
                        hanging: width + 4) + "\n"
            }
        }
        if !details.isEmpty { text += "\n" + Self.wrap(details) + "\n" }
        text += "\n" + Self.exitStatusLine + "\n"
        return text
    }

    /// Breaks lines longer than `width` at spaces; continuation lines start `hanging` spaces in
    /// (default: the line's own indentation).
    static func wrap(_ text: String, width: Int = 100, hanging: Int? = nil) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            var rest = Array(line)
            let ownIndent = rest.prefix(while: { $0 == " " }).count
            let indent = Array(repeating: Character(" "), count: hanging ?? ownIndent)
            var lines: [String] = []
            while rest.count > width {
                // The last space within the width that follows some text of this line.
                let textStart = rest.firstIndex(where: { $0 != " " }) ?? 0
                guard let space = rest[..<(width + 1)].lastIndex(of: " "), space > textStart else { break }
                lines.append(String(rest[..<space]).replacingTrailingSpaces)
                rest = indent + rest[(space + 1)...].drop(while: { $0 == " " })
            }
            lines.append(String(rest))
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// The option with this name, if the command has it.
    public func option(named name: String) -> OptionSpec? {
        options.first { $0.names.contains(name) }
    }

    /// The subcommand with this name, if there is one.
    public func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.path.last == name }
    }
}

extension String {
    /// The string without spaces at its end.
    fileprivate var replacingTrailingSpaces: String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
