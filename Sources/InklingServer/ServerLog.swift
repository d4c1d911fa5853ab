import InklingLog

/// The server's log (stderr, or the journal under systemd). Lines are built only from the
/// server's own words and numbers: never a token, a password, a user name, an address or any
/// checked text.
enum ServerLog {
    static func write(_ line: String) {
        ProcessLog.write(line)
    }
}
