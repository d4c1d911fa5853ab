import CSQLite
import InklingServerCore

/// A SQLite connection for the server (WAL, a busy timeout so concurrent writers wait instead of
/// failing, foreign keys on). Statements are prepared once per connection and reused.
public final class SQLiteConnection: SQLConnection {
    public let dialect = SQLDialect.sqlite
    private let database: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    public init(path: String) throws(SQLError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
            if let handle { sqlite3_close(handle) }
            throw SQLError("cannot open the SQLite database")
        }
        database = handle
        sqlite3_busy_timeout(handle, 10_000)
        for pragma in ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON", "PRAGMA secure_delete=ON"] {
            try execute(pragma, [])
        }
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close(database)
    }

    @discardableResult
    public func execute(_ sql: String, _ parameters: [SQLValue]) throws(SQLError) -> [[SQLValue]] {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in parameters.enumerated() {
            let position = Int32(index + 1)
            let code: Int32
            switch value {
            case let .int(number): code = sqlite3_bind_int64(statement, position, number)
            case let .text(text):
                let bytes = Array(text.utf8CString)
                code = bytes.withUnsafeBufferPointer { buffer in
                    inkling_sqlite3_bind_text(statement, position, buffer.baseAddress, Int32(buffer.count - 1))
                }
            case .null: code = sqlite3_bind_null(statement, position)
            }
            guard code == SQLITE_OK else { throw SQLError("bind failed") }
        }
        var rows: [[SQLValue]] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw SQLError(String(cString: sqlite3_errmsg(database))) }
            let columns = sqlite3_column_count(statement)
            var row: [SQLValue] = []
            row.reserveCapacity(Int(columns))
            for column in 0..<columns {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.int(sqlite3_column_int64(statement, column)))
                case SQLITE_NULL: row.append(.null)
                default:
                    if let text = sqlite3_column_text(statement, column) {
                        row.append(.text(String(cString: text)))
                    } else {
                        row.append(.null)
                    }
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// `$1` placeholders become SQLite's numbered `?1`.
    private func prepared(_ sql: String) throws(SQLError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        let text = sql.replacingDollarPlaceholders()
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, text, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw SQLError(String(cString: sqlite3_errmsg(database)))
        }
        // Transaction control and schema statements are not worth keeping.
        if !sql.hasPrefix("CREATE") { statements[sql] = statement } else { schemaStatements.append(statement) }
        return statement
    }

    private var schemaStatements: [OpaquePointer] = []
}

extension String {
    fileprivate func replacingDollarPlaceholders() -> String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "$" ? "?" : $0 }))
    }
}
