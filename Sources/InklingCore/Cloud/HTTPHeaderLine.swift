/// Reads the few response header lines Inkling's HTTP clients act on (the cloud helper's and
/// `inkling account`'s): one parser, so both agree on what a header says.
public enum HTTPHeaderLine {
    /// The value of a header line `Name: value` without spaces, tabs and the line end, when its
    /// name is `lowercaseName` (compared case-insensitively); nil for any other line.
    public static func value(named lowercaseName: String, in line: [UInt8]) -> [UInt8]? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        guard String(decoding: line[..<colon], as: UTF8.self).lowercased() == lowercaseName else { return nil }
        return line[(colon + 1)...].filter { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D && $0 != 0x0A }
    }

    /// The seconds of a `Retry-After: N` line (at most 9 digits; HTTP dates are not used by an
    /// Inkling Server); nil for any other line or value.
    public static func retryAfterSeconds(_ line: [UInt8]) -> Int? {
        guard let value = value(named: "retry-after", in: line), !value.isEmpty, value.count <= 9,
            value.allSatisfy({ (0x30...0x39).contains($0) })
        else { return nil }
        return Int(String(decoding: value, as: UTF8.self))
    }

    /// Whether the line is `Inkling-Rotate-Token: 1` (any case, spaces around the value).
    public static func asksRotation(_ line: [UInt8]) -> Bool {
        value(named: "inkling-rotate-token", in: line) == [UInt8(ascii: "1")]
    }
}
