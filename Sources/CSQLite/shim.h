/* CSQLite: the system SQLite (pkg-config sqlite3, apt libsqlite3-dev) for InklingStore, the
 * user's learned-words store. InklingCore never imports C; only InklingStore uses this module. */
#ifndef INKLING_CSQLITE_SHIM_H
#define INKLING_CSQLITE_SHIM_H

#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast macro that Swift cannot import: SQLite copies the text at once. */
static inline int inkling_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, int bytes) {
    return sqlite3_bind_text(statement, index, text, bytes, SQLITE_TRANSIENT);
}

#endif
