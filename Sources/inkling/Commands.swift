import InklingCommandLine
import InklingCore

/// Every command and option of `inkling`: read by the shared parser (`InklingCommandLine`), shown
/// by `--help`, and documented in `packaging/inkling.1` (Tests/CLI checks that the two agree).
/// A new option must be declared here, or the command line refuses it.
enum Commands {
    static let pack = OptionSpec(
        "--pack", value: "PATH", help: tr("language pack file (default: the bundled English pack)"))
    static let db = OptionSpec(
        "--db", value: "PATH", help: tr("the user store (default $XDG_DATA_HOME/inkling/user.sqlite3)"))
    static let layout = OptionSpec(
        "--layout", value: "NAME",
        help: tr("keyboard layout for typo distances: qwerty (default), qwertz, azerty or jcuken"))

    /// Predictor weights, for benchmarks (`predict --stdio`).
    static let tuning: [OptionSpec] = [
        OptionSpec(
            "--char-weight", value: "X", help: tr("weight of the character model in completions (default 0.35)"),
            numbers: 0...100),
        OptionSpec(
            "--next-char-weight", value: "X",
            help: tr("weight of the character model in next-word predictions (default 0.15)"), numbers: 0...100),
        OptionSpec(
            "--char-prior-share", value: "X", help: tr("share of the character model's prior, 0 to 1 (default 1)"),
            numbers: 0...1),
        OptionSpec(
            "--cache-weight", value: "X", help: tr("weight of words already in the document (default 0.12)"),
            numbers: 0...100),
        OptionSpec(
            "--cache-bigram-weight", value: "X",
            help: tr("weight of word pairs already in the document (default 0.25)"),
            numbers: 0...100),
        OptionSpec(
            "--window", value: "N", help: tr("candidates the re-ranker orders while a word is typed (default 32)"),
            integers: 1...100_000),
        OptionSpec(
            "--next-window", value: "N", help: tr("candidates the re-ranker orders for the next word (default 32)"),
            integers: 1...100_000),
        OptionSpec(
            "--proposals", value: "N",
            help: tr("likely next words of the neural word model added to its window (default 8)"),
            integers: 0...64),
        OptionSpec(
            "--learned-window", value: "N", help: tr("learned next words considered (default 12)"), integers: 0...1000),
        OptionSpec("--user-weight", value: "X", help: tr("weight of learned words (default 0.3)"), numbers: 0...100),
        OptionSpec(
            "--savings", value: "X", help: tr("favour longer completions by keystrokes saved (default 0)"),
            numbers: 0...10),
    ]

    /// Checker thresholds, for `check-bench` experiments.
    static let checkerTuning: [OptionSpec] = [
        OptionSpec("--margin", value: "X", help: tr("checker margin"), numbers: -1000...1000, hidden: true),
        OptionSpec("--edit-cost", value: "X", help: tr("checker cost per edit"), numbers: -1000...1000, hidden: true),
        OptionSpec(
            "--name-margin", value: "X", help: tr("checker margin for names"), numbers: -1000...1000, hidden: true),
        OptionSpec(
            "--unknown", value: "X", help: tr("log probability of an unknown word"), numbers: -1000...1000, hidden: true
        ),
        OptionSpec(
            "--frequent-prior", value: "X", help: tr("log prior of a frequent word"), numbers: -1000...1000,
            hidden: true),
        OptionSpec(
            "--frequent-bonus", value: "X", help: tr("bonus of a frequent word"), numbers: -1000...1000, hidden: true),
    ]

    static let suggest = CommandSpec(
        ["inkling", "suggest"], synopsis: "[-n N] [--pack PATH] [--db PATH | --no-learned] [--] TEXT...",
        summary:
            tr(
                "Prints the suggestions for the text before the cursor, one per line, with the learned words the input method uses."
            ),
        options: [
            OptionSpec("-n", value: "N", help: tr("how many suggestions, 1 to 50 (default 5)"), integers: 1...50),
            pack, db,
            OptionSpec("--no-learned", help: tr("ignore the learned words (the language pack alone)")),
        ],
        arguments: 0...Int.max,
        details:
            tr(
                "The words of TEXT are joined with spaces; end the text with a space for next-word predictions. Put -- before a text that starts with '-'."
            )
    )

    static let predict = CommandSpec(
        ["inkling", "predict"],
        synopsis: "--stdio [--pack PATH] [--learn] [--user-file FILE] [--user-db PATH] [options]",
        summary:
            tr(
                "Answers the typing benchmark's line protocol: one JSON request per line on standard input, one JSON reply per line on standard output."
            ),
        options: [
            OptionSpec("--stdio", help: tr("read requests from standard input (required)")),
            pack,
            OptionSpec("--no-rerank", help: tr("dictionary and word n-grams only, no character model (ablation)")),
            OptionSpec(
                "--no-neural",
                help: tr("no neural re-ranker even if the pack has one: n-grams and character model (ablation)")),
            OptionSpec("--no-typo-completions", help: tr("no completions of nearby prefixes (tge → the)")),
            OptionSpec("--learn", help: tr("learn from commit requests")),
            OptionSpec(
                "--user-file", value: "FILE",
                help: tr("with --learn, keep what was learned in this TSV file between runs")),
            OptionSpec(
                "--user-db", value: "PATH",
                help: tr("load learned words from this user store; with --learn, save to it at exit")),
        ] + tuning,
        // The protocol's description stays as it is in every language: it is the protocol.
        details: predictProtocol)

    /// `predict --stdio`'s protocol, untranslated (a raw string: po/update.sh reads Swift as C,
    /// and a multi-line literal is not C).
    static let predictProtocol =
        #"requests: {"id":N,"before":TEXT,"n":K} (K from 1 to 50, default 3), {"id":N,"reset":true},"#
        + "\n" + #"{"id":N,"commit":WORDS,"context":TEXT}. A reply is {"id":N,"words":[...]} or, for a request"#
        + "\n" + #"that cannot be answered, {"id":N,"error":SENTENCE} (id null when it cannot be read). Lines"#
        + "\n" + "longer than \(PredictServer.maximumLineBytes) bytes are answered with an error and skipped."

    static let packCommand = CommandSpec(
        ["inkling", "pack"], summary: tr("Builds and inspects language pack files."),
        subcommands: [
            CommandSpec(
                ["inkling", "pack", "build"], synopsis: "--prepared DIR -o FILE [options]",
                summary: tr("Builds a language pack from prepared inputs (for developers; see data/ATTRIBUTION.md)."),
                options: [
                    OptionSpec(
                        "--prepared", value: "DIR",
                        help: tr(
                            "folder with wordfreq.tsv, corpus.txt and optional case.tsv, bigrams.tsv, hunspell.txt")),
                    OptionSpec("-o", value: "FILE", help: tr("the pack file to write")),
                    OptionSpec("--language", value: "CODE", help: tr("the pack's language code (default en)")),
                    OptionSpec("--name", value: "NAME", help: tr("the pack's display name")),
                    OptionSpec("--pack-version", value: "V", help: tr("the pack's version string")),
                    OptionSpec("--vocabulary", value: "N", help: tr("words kept"), integers: 1...10_000_000),
                    OptionSpec(
                        "--char-table-bytes", value: "N", help: tr("size of the character model's table"),
                        integers: 1024...(1 << 31)),
                    OptionSpec("--char-order", value: "N", help: tr("character n-gram order"), integers: 1...12),
                    OptionSpec(
                        "--bigram-successors", value: "N", help: tr("next words kept per word"), integers: 0...100_000),
                    OptionSpec(
                        "--trigram-successors", value: "N", help: tr("next words kept per word pair"),
                        integers: 0...100_000
                    ),
                    OptionSpec(
                        "--trigram-context-min", value: "N", help: tr("minimum count of a word pair with successors"),
                        integers: 0...1_000_000_000),
                    OptionSpec(
                        "--trigram-successor-min", value: "X", help: tr("minimum count of a word pair's successor"),
                        numbers: 0...1e12),
                    OptionSpec(
                        "--min-successor-count", value: "X", help: tr("minimum count of a successor"), numbers: 0...1e12
                    ),
                    OptionSpec(
                        "--discount", value: "X", help: tr("absolute discount of the n-gram model"), numbers: 0...1),
                    OptionSpec(
                        "--external-bigram-weight", value: "X", help: tr("weight of the external bigram list"),
                        numbers: 0...1000),
                    OptionSpec(
                        "--hold-out-every", value: "N", help: tr("keep every Nth document out of the build"),
                        integers: 0...1_000_000),
                    OptionSpec("--held-out", value: "FILE", help: tr("write the held-out documents here")),
                    OptionSpec(
                        "--word-model", value: "FILE",
                        help: tr("the trained word language model section (NGRU) to include")),
                    OptionSpec(
                        "--reranker-network", value: "FILE",
                        help: tr("the trained re-ranker network section (NRRK) to include, with --word-model")),
                ]),
            CommandSpec(
                ["inkling", "pack", "info"], synopsis: "FILE",
                summary: tr("Prints the header, sections and metadata of a language pack."),
                arguments: 1...1),
        ])

    static let config = CommandSpec(
        ["inkling", "config"],
        summary: tr(
            "Shows and changes the input method's settings (GSettings schema {schema}).",
            ["schema": EngineSettingsSchema.id]),
        subcommands: [
            CommandSpec(["inkling", "config", "list"], summary: tr("Prints every setting and its value.")),
            CommandSpec(
                ["inkling", "config", "get"], synopsis: "KEY", summary: tr("Prints one setting's value."),
                arguments: 1...1),
            CommandSpec(
                ["inkling", "config", "set"], synopsis: "KEY VALUE",
                summary: tr("Changes a setting after checking the value against the schema."),
                arguments: 2...2,
                details:
                    tr(
                        "values: true/false (also yes/no, on/off, 1/0) for switches, whole numbers for numbers, plain text for strings, comma-separated codes or ['en', 'de'] for lists. Put -- before a value that starts with '-' (a negative number needs none)."
                    )
            ),
            CommandSpec(
                ["inkling", "config", "reset"], synopsis: "KEY", summary: tr("Returns a setting to its default."),
                arguments: 1...1),
            CommandSpec(
                ["inkling", "config", "describe"], synopsis: "KEY",
                summary: tr("Prints a setting's summary, type, allowed values and default."),
                arguments: 1...1),
        ])

    static let dictation = CommandSpec(
        ["inkling", "dictation"],
        summary: tr("Turns dictation (speech recognised on this machine) on or off, and tests the microphone."),
        subcommands: [
            CommandSpec(
                ["inkling", "dictation", "enable"],
                summary: tr("Turns dictation on (the dictation-key then starts and stops listening).")),
            CommandSpec(["inkling", "dictation", "disable"], summary: tr("Turns dictation off.")),
            CommandSpec(
                ["inkling", "dictation", "test"], synopsis: "[--seconds N] [--device NAME] [--audio-file WAV]",
                summary:
                    tr(
                        "Listens once and prints what was recognised, with a level meter; audio never leaves the machine."
                    ),
                options: [
                    OptionSpec(
                        "--seconds", value: "N", help: tr("how long to listen, 1 to 120 (default 10)"),
                        integers: 1...120),
                    OptionSpec(
                        "--device", value: "NAME",
                        help: tr("the sound server's source to record from (default: the dictation-device setting)")),
                    OptionSpec(
                        "--audio-file", value: "WAV",
                        help: tr("recognise this 16 kHz mono WAV instead of the microphone")),
                ]),
            CommandSpec(
                ["inkling", "dictation", "words"], synopsis: "[-n N] [--pack PATH]",
                summary:
                    tr(
                        "Prints the language pack's words, most frequent first (to adapt the recogniser's dictionary; bench/dictation_wer.py)."
                    ),
                options: [
                    OptionSpec("-n", value: "N", help: tr("how many words (default: all)"), integers: 1...10_000_000),
                    pack,
                ]),
        ])

    static let manifestURL = OptionSpec(
        "--manifest-url", value: "URL",
        help: tr("fetch the list of packs from this https:// URL (default $INKLING_MANIFEST_URL)"))

    static let packs = CommandSpec(
        ["inkling", "packs"],
        summary: tr("Lists, installs, removes, verifies and updates downloadable language packs (SHA-256 verified)."),
        subcommands: [
            CommandSpec(
                ["inkling", "packs", "list"],
                summary: tr("Lists the packs of the manifest and whether each is installed.")),
            CommandSpec(
                ["inkling", "packs", "install"], synopsis: "LANG [--manifest-url URL]",
                summary: tr("Downloads, verifies and installs a language pack."),
                options: [manifestURL], arguments: 1...1),
            CommandSpec(
                ["inkling", "packs", "remove"], synopsis: "LANG", summary: tr("Removes an installed language pack."),
                arguments: 1...1),
            CommandSpec(
                ["inkling", "packs", "verify"], synopsis: "[LANG]",
                summary:
                    tr(
                        "Checks installed packs against the manifest's sizes and SHA-256 sums (exit status 1 when one fails)."
                    ),
                arguments: 0...1),
            CommandSpec(
                ["inkling", "packs", "update"], synopsis: "[--manifest-url URL]",
                summary: tr("Fetches the newest manifest of downloadable packs."),
                options: [manifestURL]),
        ])

    static let learned = CommandSpec(
        ["inkling", "learned"],
        summary: tr("Shows, exports, imports, forgets and wipes the words learned from your typing."),
        subcommands: [
            CommandSpec(
                ["inkling", "learned", "list"], synopsis: "[--limit N] [--db PATH]",
                summary: tr("Lists learned words with their counts and last use."),
                options: [
                    OptionSpec(
                        "--limit", value: "N", help: tr("how many words (default 50)"), integers: 0...Int(Int32.max)),
                    db,
                ]),
            CommandSpec(
                ["inkling", "learned", "forget"], synopsis: "WORD [--db PATH]",
                summary: tr("Forgets a word everywhere, with every context it was learned in."),
                options: [db], arguments: 1...1),
            CommandSpec(
                ["inkling", "learned", "wipe"], synopsis: "[--yes] [--db PATH]",
                summary: tr("Forgets everything learned."),
                options: [
                    OptionSpec(
                        "-y", "--yes",
                        help: tr("do not ask for confirmation (required when standard input is not a terminal)")), db,
                ],
                details:
                    tr(
                        "On a terminal it asks before wiping; without a terminal it refuses (exit status 2) unless --yes is given."
                    )
            ),
            CommandSpec(
                ["inkling", "learned", "export"], synopsis: "[FILE|-] [--db PATH]",
                summary:
                    tr(
                        "Writes the learned words as TSV (context, key, display, count, last used) to FILE (mode 0600) or standard output."
                    ),
                options: [db], arguments: 0...1),
            CommandSpec(
                ["inkling", "learned", "import"], synopsis: "FILE|- [--db PATH]",
                summary: tr("Merges a TSV export into the store (the larger count wins)."),
                options: [db], arguments: 1...1),
            CommandSpec(
                ["inkling", "learned", "_stress"], summary: tr("Crash-test writer (tests only)."),
                options: [
                    OptionSpec("--start", value: "N", help: tr("first word number"), integers: 0...Int(Int32.max)),
                    OptionSpec("--seconds", value: "X", help: tr("how long"), numbers: 0...86_400),
                    OptionSpec("--words", value: "N", help: tr("stop after N words"), integers: 0...Int.max), db,
                ], hidden: true),
        ],
        details: tr("the store: $XDG_DATA_HOME/inkling/user.sqlite3 (default ~/.local/share/inkling/user.sqlite3)"))

    static let learn = CommandSpec(
        ["inkling", "learn"], synopsis: "FILE|- [--db PATH] [--pack PATH]",
        summary: tr("Learns from your own texts (one document a line) as if you had typed them."),
        options: [db, pack], arguments: 1...1)

    static let check = CommandSpec(
        ["inkling", "check"], synopsis: "[--layout NAME] [--pack PATH] [--] TEXT...",
        summary: tr("Prints the words of the text that look like typos, with their likely fixes."),
        options: [layout, pack] + checkerTuning, arguments: 0...Int.max)

    static let checkBench = CommandSpec(
        ["inkling", "check-bench"],
        synopsis: "--text FILE [--seed N] [--rate R] [--show WHAT] [--layout NAME] [--pack PATH]",
        summary: tr("Checker benchmark: false flags on clean text, recall and accuracy on injected typos."),
        options: [
            OptionSpec("--text", value: "FILE", help: tr("clean text, one document a line")),
            OptionSpec("--seed", value: "N", help: tr("seed of the typo injector (default 1)"), integers: 0...Int.max),
            OptionSpec(
                "--rate", value: "R", help: tr("share of eligible words given a typo, 0 to 1 (default 0.1)"),
                numbers: 0...1
            ),
            OptionSpec(
                "--show", value: "WHAT",
                help: tr(
                    "also print false (flags on clean text), misses, wrong (wrong fixes), slow (the slowest checks) or text"
                )),
            layout, pack,
        ] + checkerTuning)

    static let server = OptionSpec(
        "--server", value: "URL", help: tr("the Inkling Server's https:// URL (default: the cloud-endpoint setting)"))

    static let account = CommandSpec(
        ["inkling", "account"],
        summary: tr(
            "Signs this computer in to an Inkling Server for the cloud check, shows the sign-in and signs out."),
        subcommands: [
            CommandSpec(
                ["inkling", "account", "login"], synopsis: "--server URL [--user NAME] [--device NAME]",
                summary: tr(
                    "Signs in with your password and stores the device token the server returns in your keyring."),
                options: [
                    OptionSpec(
                        "--server", value: "URL",
                        help: tr("the Inkling Server's https:// URL (http:// only to this machine)")),
                    OptionSpec(
                        "--user", value: "NAME", help: tr("your user name on the server (default: your login name)")),
                    OptionSpec(
                        "--device", value: "NAME",
                        help: tr("a name for this computer, up to 64 characters (default: the host name)")),
                ],
                details:
                    tr(
                        "The password is asked for without echo on a terminal, or read from the first line of standard input otherwise; it is sent to the server once and never stored."
                    )
            ),
            CommandSpec(
                ["inkling", "account", "status"], synopsis: "[--server URL]",
                summary:
                    tr(
                        "Shows whether this computer is signed in, as whom, and when its token expires (exit status 1 when not signed in)."
                    ),
                options: [server]),
            CommandSpec(
                ["inkling", "account", "logout"], synopsis: "[--server URL] [--everywhere]",
                summary: tr("Revokes this device's token on the server and deletes it from the keyring."),
                options: [
                    server,
                    OptionSpec("--everywhere", help: tr("sign out every device of your account, not just this one")),
                ],
                details:
                    tr(
                        "When the server cannot be reached the token is still deleted here, and the command says so (exit status 1)."
                    )
            ),
        ])

    static let inkling = CommandSpec(
        ["inkling"], synopsis: "COMMAND [options]",
        summary:
            tr(
                "Predictive text from the command line, and the settings, language packs and learned words of the Inkling input method."
            ),
        subcommands: [
            suggest, predict, check, checkBench, config, packs, learned, learn, packCommand, account, dictation,
        ])
}
