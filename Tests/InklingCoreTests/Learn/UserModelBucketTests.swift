import Testing

@testable import InklingCore

@Suite("User model prefix buckets")
struct UserModelBucketTests {
    /// The bucket is the key's first two scalars, however many bytes and characters they make.
    @Test(arguments: [
        ("", ""), ("a", "a"), ("ab", "ab"), ("abc", "ab"), ("é", "é"), ("éa", "éa"),
        ("e\u{0301}x", "e\u{0301}"), ("🇫🇷x", "🇫🇷"), ("👩‍💻", "👩\u{200D}"), ("日本語", "日本"),
        ("\r\nx", "\r\n"),
    ])
    func bucketIsTheFirstTwoScalars(key: String, expected: String) {
        let bucket = UserModel.bucket(key)
        #expect(Array(bucket.unicodeScalars) == Array(expected.unicodeScalars))
        #expect(Array(bucket.unicodeScalars) == Array(key.unicodeScalars.prefix(2)))
    }

    /// Words found by a two-letter prefix and by a one-letter one agree with a plain scan.
    @Test func prefixLookupsAgreeWithAScan() {
        var model = UserModel()
        let words = ["éclair", "e\u{0301}cole", "ébène", "eat", "ear", "a", "ab", "abc", "日本", "日本語", "🇫🇷fan"]
        for (index, word) in words.enumerated() {
            for _ in 0...index { model.record(word: word, after: [], now: 0) }
        }
        for prefix in ["é", "e", "ea", "a", "ab", "日", "日本", "🇫🇷", "🇫🇷f", "z"] {
            let found = Set(model.words(withPrefix: prefix, limit: 100).map(\.key))
            let scanned = Set(model.allEntries.filter { $0.context.isEmpty && $0.key.hasPrefix(prefix) }.map(\.key))
            #expect(found == scanned, "prefix \(prefix)")
        }
    }
}
