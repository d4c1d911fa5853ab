import CIBus

#if canImport(Glibc)
    import Glibc
#endif

/// Gives back the resident pages of this process's read-only file mappings — the engine's code
/// and constants, its libraries', the mapped pack — that hold no private change (issue 18).
///
/// Such pages are the file's, in the page cache; a mapping's resident pages count in the
/// engine's RSS although most were touched once (start-up code, SQLite reading the store) or
/// only mapped because the kernel maps 64 KB around every fault it serves from the page cache.
/// Unmapping them loses nothing: what is used again faults back from the page cache (minor
/// faults, a fraction of a millisecond once). Only mappings that are not writable and have no
/// anonymous (copied-on-write) page are touched: relocated data (RELRO) keeps its pages.
enum ResidentFilePages {
    /// Drops the unchanged read-only file mappings' pages; returns the resident kB they had.
    @discardableResult
    static func drop() -> Int {
        var dropped = 0
        for mapping in readOnlyFileMappings() where mapping.residentKB > 0 {
            guard let start = UnsafeMutableRawPointer(bitPattern: mapping.start) else { continue }
            if madvise(start, Int(mapping.end - mapping.start), MADV_DONTNEED) == 0 { dropped += mapping.residentKB }
        }
        return dropped
    }

    struct Mapping {
        var start: UInt
        var end: UInt
        var residentKB: Int
    }

    /// The mappings of files (not anonymous, not [vdso] and the like) that are private,
    /// not writable and have no anonymous page, from /proc/self/smaps.
    static func readOnlyFileMappings() -> [Mapping] {
        guard let file = fopen("/proc/self/smaps", "r") else { return [] }
        defer { fclose(file) }
        var result: [Mapping] = []
        var current: Mapping?
        var currentEligible = false
        var resident = 0
        func finish() {
            if var mapping = current, currentEligible {
                mapping.residentKB = resident
                result.append(mapping)
            }
            current = nil
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if let dash = first.firstIndex(of: "-"), first.last != ":" {
                // A mapping's header: start-end perms offset device inode [path]
                finish()
                guard let start = UInt(first[..<dash], radix: 16),
                    let end = UInt(first[first.index(after: dash)...], radix: 16), fields.count >= 6
                else { continue }
                let permissions = fields[1]
                let path = fields[5].trimmingSuffix("\n")
                current = Mapping(start: start, end: end, residentKB: 0)
                currentEligible = path.hasPrefix("/") && (permissions == "r-xp" || permissions == "r--p")
                resident = 0
            } else if first == "Rss:", fields.count >= 2 {
                resident = Int(fields[1]) ?? 0
            } else if first == "Anonymous:", fields.count >= 2, (Int(fields[1]) ?? 1) != 0 {
                currentEligible = false
            }
        }
        finish()
        return result
    }
}

extension Substring {
    fileprivate func trimmingSuffix(_ suffix: String) -> Substring {
        hasSuffix(suffix) ? dropLast(suffix.count) : self
    }
}
