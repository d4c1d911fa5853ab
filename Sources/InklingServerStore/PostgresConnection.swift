import CPQ
import InklingServerCore

/// A PostgreSQL connection (libpq): parameters always travel separately from the SQL text
/// (`PQexecParams`), results as text. Error messages keep only PostgreSQL's primary message and
/// SQLSTATE, never the DETAIL (which can quote values).
public final class PostgresConnection: SQLConnection {
    public let dialect = SQLDialect.postgresql
    private let connection: OpaquePointer

    public init(url: String) throws(SQLError) {
        guard let connection = PQconnectdb(url) else { throw SQLError("cannot allocate a PostgreSQL connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            PQfinish(connection)
            throw SQLError("cannot connect to PostgreSQL")
        }
        inkling_pq_quiet(connection)
        self.connection = connection
    }

    deinit {
        PQfinish(connection)
    }

    @discardableResult
    public func execute(_ sql: String, _ parameters: [SQLValue]) throws(SQLError) -> [[SQLValue]] {
        var texts: [[CChar]?] = parameters.map { value in
            switch value {
            case let .int(number): Array(String(number).utf8CString)
            case let .text(text): Array(text.utf8CString)
            case .null: nil
            }
        }
        let result: OpaquePointer? = withArrayOfOptionalCStrings(&texts) { pointers in
            PQexecParams(connection, sql, Int32(parameters.count), nil, pointers, nil, nil, 0)
        }
        guard let result else { throw SQLError("PostgreSQL: no result") }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? "?"
            let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) } ?? "error"
            throw SQLError("PostgreSQL \(state): \(primary)")
        }
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        var rows: [[SQLValue]] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [SQLValue] = []
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) != 0 {
                    values.append(.null)
                    continue
                }
                let text = String(cString: PQgetvalue(result, row, column))
                // int8/int4/int2/numeric results come back as integers, the rest as text.
                switch PQftype(result, column) {
                case 20, 21, 23, 1700: values.append(Int64(text).map { .int($0) } ?? .text(text))
                default: values.append(.text(text))
                }
            }
            rows.append(values)
        }
        return rows
    }
}

/// Calls `body` with a C array of C strings (NULL for nil) that live for the call.
private func withArrayOfOptionalCStrings<R>(_ strings: inout [[CChar]?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
    var pointers: [UnsafePointer<CChar>?] = []
    var storage: [UnsafeMutablePointer<CChar>] = []
    defer { storage.forEach { $0.deallocate() } }
    for string in strings {
        guard let string else {
            pointers.append(nil)
            continue
        }
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: string.count)
        copy.initialize(from: string, count: string.count)
        storage.append(copy)
        pointers.append(UnsafePointer(copy))
    }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}
