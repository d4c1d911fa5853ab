/// Splits a byte stream into lines with a hard length limit. A line longer than the limit is
/// not kept: its bytes are counted and dropped as they arrive, so memory stays bounded.
public struct LineSplitter {
    public enum Item: Equatable, Sendable {
        case line([UInt8])
        /// A line that exceeded the limit, with its length in bytes (without the newline).
        case oversized(Int)
    }

    public let limit: Int
    private var buffer: [UInt8] = []
    private var discarded: Int?

    /// Whether the line being read is already over the limit (its bytes are being dropped).
    public var isDiscardingLine: Bool { discarded != nil }

    /// A splitter that keeps lines of at most `limit` bytes.
    public init(limit: Int) {
        self.limit = limit
    }

    /// The lines completed by these bytes (a newline ends a line; a `\r` before it is dropped).
    public mutating func feed<Bytes: Collection>(_ bytes: Bytes) -> [Item] where Bytes.Element == UInt8 {
        var items: [Item] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if let count = discarded {
                    items.append(.oversized(count))
                } else {
                    if buffer.last == UInt8(ascii: "\r") { buffer.removeLast() }
                    items.append(.line(buffer))
                }
                buffer.removeAll(keepingCapacity: true)
                discarded = nil
            } else if let count = discarded {
                discarded = count + 1
            } else if buffer.count >= limit {
                discarded = buffer.count + 1
                buffer.removeAll(keepingCapacity: false)
            } else {
                buffer.append(byte)
            }
        }
        return items
    }

    /// At the end of the stream: the last line if it had no newline (nil when there is none).
    public mutating func finish() -> Item? {
        defer {
            buffer.removeAll()
            discarded = nil
        }
        if let count = discarded { return .oversized(count) }
        return buffer.isEmpty ? nil : .line(buffer)
    }
}
