import FoundationEssentials

/// Why a language pack could not be opened.
public enum PackError: Error, Equatable, CustomStringConvertible, Sendable {
    case unreadable(path: String, reason: String)
    case tooSmall(size: Int)
    case badMagic
    case unsupportedVersion(found: UInt32, supported: UInt32)
    case lengthMismatch(header: UInt64, actual: Int)
    case checksumMismatch
    case sectionOutOfBounds(tag: String)
    case missingSection(tag: String)
    case malformed(tag: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "cannot read language pack \(path): \(reason)"
        case .tooSmall(let size): return "language pack is truncated (\(size) bytes, smaller than its header)"
        case .badMagic: return "not an Inkling language pack (bad magic number)"
        case .unsupportedVersion(let found, let supported):
            return "language pack format version \(found) is not supported (this Inkling reads version \(supported))"
        case .lengthMismatch(let header, let actual):
            return "language pack is truncated or padded (header says \(header) bytes, file has \(actual))"
        case .checksumMismatch: return "language pack is corrupt (checksum mismatch)"
        case .sectionOutOfBounds(let tag): return "language pack is corrupt (section \(tag) lies outside the file)"
        case .missingSection(let tag): return "language pack lacks section \(tag)"
        case .malformed(let tag, let reason): return "language pack is corrupt (section \(tag): \(reason))"
        }
    }
}

/// The container format of a `.inkpack` file: a header, a section table and sections.
///
/// Layout (little endian): magic `INKPACK\0`, format version (u32), section count (u32),
/// total length (u64), payload checksum (u64, over every byte after the header), then one
/// 16-byte entry per section: tag (4 ASCII bytes), padding (u32), offset (u32), length (u32).
/// Sections are 8-byte aligned.
public enum PackFormat {
    /// The format version this build reads and writes.
    public static let version: UInt32 = 1
    static let magic: [UInt8] = Array("INKPACK\0".utf8)
    static let headerSize = 32
    static let sectionEntrySize = 16

    /// A fast 64-bit checksum; any change confined to one 8-byte word always changes it.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let words = bytes.count / 8
        for index in 0..<words {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
            hash = (hash ^ word) &* 0x0000_0100_0000_01B3
            hash ^= hash >> 29
        }
        for index in (words * 8)..<bytes.count {
            hash = (hash ^ UInt64(bytes[index])) &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// The numeric form of a four-letter section tag.
    public static func tag(_ name: String) -> UInt32 {
        var value: UInt32 = 0
        for (shift, byte) in name.utf8.prefix(4).enumerated() { value |= UInt32(byte) << (8 * UInt32(shift)) }
        return value
    }

    static func tagName(_ tag: UInt32) -> String {
        String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: tag >> (8 * $0)) }, as: UTF8.self)
    }
}

/// Assembles a pack file from named sections.
public struct PackWriter {
    private var sections: [(tag: UInt32, bytes: [UInt8])] = []

    public init() {}

    /// Adds a section of raw bytes.
    public mutating func add(_ tag: String, bytes: [UInt8]) {
        sections.append((PackFormat.tag(tag), bytes))
    }

    /// Adds a section holding an array of fixed-width integers.
    public mutating func add<T: FixedWidthInteger>(_ tag: String, integers: [T]) {
        var bytes = [UInt8]()
        bytes.reserveCapacity(integers.count * MemoryLayout<T>.size)
        for value in integers {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        add(tag, bytes: bytes)
    }

    /// The finished file.
    public func serialize() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: PackFormat.headerSize + sections.count * PackFormat.sectionEntrySize)
        func align() { while out.count % 8 != 0 { out.append(0) } }
        align()
        var table: [(UInt32, UInt32, UInt32)] = []
        for section in sections {
            align()
            table.append((section.tag, UInt32(out.count), UInt32(section.bytes.count)))
            out.append(contentsOf: section.bytes)
        }
        align()
        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            withUnsafeBytes(of: value.littleEndian) { raw in
                for (index, byte) in raw.enumerated() { out[offset + index] = byte }
            }
        }
        for (index, byte) in PackFormat.magic.enumerated() { out[index] = byte }
        put(PackFormat.version, at: 8)
        put(UInt32(sections.count), at: 12)
        put(UInt64(out.count), at: 16)
        for (index, entry) in table.enumerated() {
            let base = PackFormat.headerSize + index * PackFormat.sectionEntrySize
            put(entry.0, at: base)
            put(entry.1, at: base + 8)
            put(entry.2, at: base + 12)
        }
        let checksum = out.withUnsafeBytes { raw in
            PackFormat.checksum(UnsafeRawBufferPointer(rebasing: raw[PackFormat.headerSize...]))
        }
        put(checksum, at: 24)
        return out
    }
}

/// How much of a pack is checked when it is opened.
public enum PackCheck: Sendable, Equatable {
    /// Every byte: the payload checksum and every structural invariant (the default).
    case full
    /// Only what opening reads (header, section table, metadata); the rest is checked later by
    /// `LanguagePack.verifyDeferredChecks()`. Only for bytes a verification record vouches for.
    case deferred
}

/// An opened, verified pack file: its bytes in this process's private memory and their section table.
///
/// The file is read once (never mapped) and verified in memory; sections are then read in
/// place through bounds-checked views. Because nothing refers back to the file, rewriting or
/// truncating it while a process uses the pack (`cp` or `rsync --inplace` over it, a disk-full
/// truncation) cannot change what the process reads, nor kill it with SIGBUS as a shared
/// mapping of the file would.
public final class PackFile: @unchecked Sendable {
    /// Owns the bytes; the raw pointer below points into it and it is never mutated.
    private let storage: Data
    let base: UnsafeRawPointer
    /// The file's size in bytes.
    public let size: Int
    /// Whether the whole-file checks ran at open or were deferred.
    public let check: PackCheck
    private var sections: [UInt32: (offset: Int, length: Int)] = [:]

    /// The largest pack this build opens (section offsets are 32-bit; real packs are ~10 MB).
    public static let maximumSize = 1 << 30

    /// Reads and verifies the pack at `path`.
    public convenience init(path: String) throws(PackError) {
        try self.init(data: Self.read(path: path))
    }

    /// The bytes of the file at `path`, read once into private memory (not mapped), so that
    /// whoever verifies them (checksum, SHA-256) checks exactly the bytes that will be used.
    public static func read(path: String) throws(PackError) -> Data {
        let attributes: [FileAttributeKey: Any]
        do {
            // Of the file itself: a pack may be a symbolic link (to the bundled one, say).
            let target = URL(filePath: path).resolvingSymlinksInPath().path
            attributes = try FileManager.default.attributesOfItem(atPath: target)
        } catch {
            throw .unreadable(path: path, reason: FileProblem.reason(error))
        }
        // A FIFO or device would be read without end; a pack is always a regular file.
        let type = attributes[.type] as? FileAttributeType
        // 21: EISDIR.
        if type == .typeDirectory { throw .unreadable(path: path, reason: FileProblem.reason(posixCode: 21)) }
        guard type == .typeRegular else { throw .unreadable(path: path, reason: "not a regular file") }
        if let size = Self.integer(attributes[.size]), size > UInt64(maximumSize) {
            throw .unreadable(path: path, reason: "\(size) bytes, more than a language pack can be")
        }
        do {
            // No mapping options: the bytes are copied into memory this process owns.
            let data = try Data(contentsOf: URL(filePath: path))
            guard data.count <= maximumSize else {
                throw PackError.unreadable(path: path, reason: "more than \(maximumSize) bytes")
            }
            return data
        } catch let error as PackError {
            throw error
        } catch {
            throw .unreadable(path: path, reason: FileProblem.reason(error))
        }
    }

    private static func integer(_ value: Any?) -> UInt64? {
        switch value {
        case let value as UInt64: return value
        case let value as Int: return value < 0 ? nil : UInt64(value)
        case let value as Int64: return value < 0 ? nil : UInt64(value)
        default: return nil
        }
    }

    /// Verifies pack bytes already in memory (tests, downloads), or a mapping of a file the
    /// glue owns (`Data(bytesNoCopy:…)`, unmapped when the last reference goes).
    ///
    /// With `check: .deferred` the payload checksum (and, in `LanguagePack`, every structural
    /// check that reads whole sections) is skipped, so that opening touches only the header, the
    /// section table and the metadata: for a file whose earlier full check a verification record
    /// vouches for (`PackOpening`). `LanguagePack.verifyDeferredChecks()` runs them later.
    public init(data: Data, check: PackCheck = .full) throws(PackError) {
        self.check = check
        storage = data.isEmpty ? Data([0]) : data
        size = data.count
        // Never empty (see above), so it has a base address.
        guard let start = storage.withUnsafeBytes({ $0.baseAddress }) else { throw .tooSmall(size: size) }
        base = start
        let bytes = UnsafeRawBufferPointer(start: base, count: size)
        guard size >= PackFormat.headerSize else { throw .tooSmall(size: size) }
        guard Array(bytes[0..<8]) == PackFormat.magic else { throw .badMagic }
        let version = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        guard version == PackFormat.version else {
            throw .unsupportedVersion(found: version, supported: PackFormat.version)
        }
        let count = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
        let length = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        guard length == UInt64(size) else { throw .lengthMismatch(header: length, actual: size) }
        if check == .full, !checksumMatches() { throw .checksumMismatch }
        guard count <= (size - PackFormat.headerSize) / PackFormat.sectionEntrySize else {
            throw .malformed(tag: "header", reason: "section count \(count) too large")
        }
        // Sections start after the section table, 8-byte aligned, inside the file, and never
        // overlap one another or the table: each byte has one meaning, so validating one
        // section can never be undone by reading another over the same bytes.
        let tableEnd = PackFormat.headerSize + count * PackFormat.sectionEntrySize
        var extents: [(offset: Int, end: Int, tag: UInt32)] = []
        extents.reserveCapacity(count)
        for index in 0..<count {
            let entry = PackFormat.headerSize + index * PackFormat.sectionEntrySize
            let tag = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: entry, as: UInt32.self))
            let offset = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: entry + 8, as: UInt32.self)))
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: entry + 12, as: UInt32.self)))
            guard offset >= PackFormat.headerSize, offset <= size, length <= size - offset else {
                throw .sectionOutOfBounds(tag: PackFormat.tagName(tag))
            }
            guard offset >= tableEnd else {
                throw .malformed(tag: PackFormat.tagName(tag), reason: "section overlaps the section table")
            }
            guard offset % 8 == 0 else {
                throw .malformed(tag: PackFormat.tagName(tag), reason: "section offset \(offset) is not 8-byte aligned")
            }
            guard sections[tag] == nil else {
                throw .malformed(tag: PackFormat.tagName(tag), reason: "section appears twice")
            }
            sections[tag] = (offset, length)
            if length > 0 { extents.append((offset, offset + length, tag)) }
        }
        extents.sort { ($0.offset, $0.end) < ($1.offset, $1.end) }
        for index in extents.indices.dropFirst() where extents[index].offset < extents[index - 1].end {
            throw .malformed(
                tag: PackFormat.tagName(extents[index].tag),
                reason: "section overlaps section \(PackFormat.tagName(extents[index - 1].tag))")
        }
    }

    /// Whether the payload checksum in the header matches the bytes (reads every byte).
    public func checksumMatches() -> Bool {
        let bytes = UnsafeRawBufferPointer(start: base, count: size)
        guard size >= PackFormat.headerSize else { return false }
        let stored = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        return stored == PackFormat.checksum(UnsafeRawBufferPointer(rebasing: bytes[PackFormat.headerSize...]))
    }

    /// All of the pack's bytes, where they lie in memory (for residency advice to the kernel).
    public var mappedBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: size) }

    /// Whether the pack has a section.
    public func has(_ tag: String) -> Bool { sections[PackFormat.tag(tag)] != nil }

    /// The raw bytes of a section.
    public func bytes(_ tag: String) throws(PackError) -> UnsafeRawBufferPointer {
        guard let section = sections[PackFormat.tag(tag)] else { throw .missingSection(tag: tag) }
        return UnsafeRawBufferPointer(start: base + section.offset, count: section.length)
    }

    /// A section read as an array of fixed-width integers.
    public func array<T: FixedWidthInteger>(_ tag: String, of type: T.Type) throws(PackError) -> PackArray<T> {
        let raw = try bytes(tag)
        guard raw.count % MemoryLayout<T>.size == 0 else {
            throw .malformed(tag: tag, reason: "length \(raw.count) is not a multiple of \(MemoryLayout<T>.size)")
        }
        return PackArray(raw: raw)
    }
}

/// A bounds-checked, read-only view of little-endian integers inside a pack.
public struct PackArray<T: FixedWidthInteger>: RandomAccessCollection, @unchecked Sendable {
    let raw: UnsafeRawBufferPointer

    /// An empty array.
    public init() { raw = UnsafeRawBufferPointer(start: nil, count: 0) }
    init(raw: UnsafeRawBufferPointer) { self.raw = raw }

    public var startIndex: Int { 0 }
    public var endIndex: Int { raw.count / MemoryLayout<T>.size }

    @inline(__always)
    public subscript(index: Int) -> T {
        precondition(index >= 0 && index < endIndex, "pack array index out of range")
        return T(littleEndian: raw.loadUnaligned(fromByteOffset: index &* MemoryLayout<T>.size, as: T.self))
    }
}
