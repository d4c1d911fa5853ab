import FoundationEssentials
import InklingCore

/// Editing a fixture pack's sections by hand, to craft structurally broken packs.
public enum PackSurgery {
    /// The sections of a pack built by `PackBuilder`, by tag, in the builder's order.
    public static func sections(of bytes: [UInt8]) throws -> [(tag: String, bytes: [UInt8])] {
        let file = try PackFile(data: Data(bytes))
        return try FixturePacks.sectionTags.map { tag in (tag, Array(try file.bytes(tag))) }
    }

    /// Reassembles sections with `PackWriter` (so header, alignment and checksum are valid).
    public static func assemble(_ sections: [(tag: String, bytes: [UInt8])]) -> [UInt8] {
        var writer = PackWriter()
        for section in sections { writer.add(section.tag, bytes: section.bytes) }
        return writer.serialize()
    }

    /// The pack with one section's bytes changed (and everything else rewritten validly).
    public static func editing(
        _ tag: String, of bytes: [UInt8], _ edit: (inout [UInt8]) throws -> Void
    ) throws -> [UInt8] {
        var sections = try sections(of: bytes)
        guard let index = sections.firstIndex(where: { $0.tag == tag }) else {
            preconditionFailure("no section \(tag)")
        }
        try edit(&sections[index].bytes)
        return assemble(sections)
    }

    /// The pack with one integer section's values changed.
    public static func editing<T: FixedWidthInteger>(
        _ tag: String, as type: T.Type, of bytes: [UInt8], _ edit: (inout [T]) throws -> Void
    ) throws -> [UInt8] {
        try editing(tag, of: bytes) { raw in
            var values = integers(raw, as: T.self)
            try edit(&values)
            raw = Self.bytes(values)
        }
    }

    /// The pack without one section.
    public static func removing(_ tag: String, from bytes: [UInt8]) throws -> [UInt8] {
        assemble(try sections(of: bytes).filter { $0.tag != tag })
    }

    /// Little-endian integers of a section.
    public static func integers<T: FixedWidthInteger>(_ bytes: [UInt8], as type: T.Type = T.self) -> [T] {
        let size = MemoryLayout<T>.size
        precondition(bytes.count % size == 0, "section length \(bytes.count) is not a multiple of \(size)")
        return stride(from: 0, to: bytes.count, by: size).map { start in
            var value: T = 0
            for index in 0..<size { value |= T(truncatingIfNeeded: bytes[start + index]) << (8 * index) }
            return value
        }
    }

    /// Little-endian bytes of integers.
    public static func bytes<T: FixedWidthInteger>(_ integers: [T]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(integers.count * MemoryLayout<T>.size)
        for value in integers {
            for index in 0..<MemoryLayout<T>.size { out.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
        }
        return out
    }

    /// Recomputes the header checksum after bytes were patched in place.
    public static func fixChecksum(_ bytes: inout [UInt8]) {
        let checksum = bytes.withUnsafeBytes { raw in
            PackFormat.checksum(UnsafeRawBufferPointer(rebasing: raw[32...]))
        }
        for index in 0..<8 { bytes[24 + index] = UInt8(truncatingIfNeeded: checksum >> (8 * index)) }
    }

    /// Writes a little-endian integer into bytes at an offset.
    public static func put<T: FixedWidthInteger>(_ value: T, at offset: Int, in bytes: inout [UInt8]) {
        for index in 0..<MemoryLayout<T>.size {
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index))
        }
    }

    /// Reads a little-endian integer from bytes at an offset.
    public static func get<T: FixedWidthInteger>(_ type: T.Type, at offset: Int, in bytes: [UInt8]) -> T {
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size { value |= T(truncatingIfNeeded: bytes[offset + index]) << (8 * index) }
        return value
    }
}
