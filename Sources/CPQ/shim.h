/* CPQ: libpq (pkg-config libpq, apt libpq-dev) for inkling-server's PostgreSQL storage. */
#ifndef INKLING_CPQ_SHIM_H
#define INKLING_CPQ_SHIM_H
#include <libpq-fe.h>

static void inkling_pq_ignore_notice(void *context, const char *message) {
    (void)context;
    (void)message;
}

/* Notices ("relation already exists, skipping") are not printed on stderr. */
static inline void inkling_pq_quiet(PGconn *connection) {
    PQsetNoticeProcessor(connection, inkling_pq_ignore_notice, NULL);
}
#endif
