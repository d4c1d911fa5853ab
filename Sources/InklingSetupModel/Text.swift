extension StringProtocol {
    /// The text without leading and trailing characters from `set` (spaces, newlines…).
    func trimmed(_ set: Set<Character> = [" ", "\n", "\t"]) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}
