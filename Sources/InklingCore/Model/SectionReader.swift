/// Sequential, bounds-checked reads of a model section (NGRU, NRRK): little-endian words and
/// floats, int8 arrays padded to 4 bytes.
struct SectionReader {
    let bytes: UnsafeRawBufferPointer
    let tag: String
    var offset = 0

    mutating func take(_ count: Int) throws(PackError) -> Int {
        guard count >= 0, count <= bytes.count - offset else {
            throw .malformed(tag: tag, reason: "ends before its declared contents")
        }
        defer { offset += count }
        return offset
    }
    mutating func u32() throws(PackError) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: try take(4), as: UInt32.self))
    }
    mutating func floats(_ count: Int) throws(PackError) -> [Float] {
        let start = try take(count * 4)
        return (0..<count).map {
            Float(
                bitPattern: UInt32(
                    littleEndian: bytes.loadUnaligned(fromByteOffset: start + $0 * 4, as: UInt32.self)))
        }
    }
    mutating func int8s(_ count: Int) throws(PackError) -> [Int8] {
        let start = try take(count)
        _ = try take((4 - count % 4) % 4)
        return (0..<count).map { Int8(bitPattern: bytes[start + $0]) }
    }
}
