/* CIBus: libibus (pkg-config ibus-1.0) for Swift.
 *
 * Only what Swift cannot import is spelled out here, as static inline functions
 * (no separate C target needed): the g_signal_connect macro and the GObject casts.
 */
#ifndef INKLING_CIBUS_SHIM_H
#define INKLING_CIBUS_SHIM_H

#include <ibus.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <malloc.h>
#include <sys/syscall.h>
#include <unistd.h>

/* g_signal_connect_data with a destroy notify for the user data (each connection owns a reference). */
static inline gulong inkling_signal_connect(gpointer instance, const gchar *signal, GCallback handler,
                                            gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, (GConnectFlags)0);
}

static inline GObject *inkling_object(gpointer instance) { return G_OBJECT(instance); }
static inline IBusEngine *inkling_engine(gpointer instance) { return IBUS_ENGINE(instance); }
static inline IBusText *inkling_text(gpointer instance) { return IBUS_IS_TEXT(instance) ? IBUS_TEXT(instance) : NULL; }
static inline const gchar *inkling_text_string(IBusText *text) { return text ? text->text : NULL; }

/* An engine with has-focus-id set: the daemon then sends FocusInId (the input context's path and
 * the client's kind, e.g. QIBusInputContext) and FocusOutId instead of FocusIn and FocusOut.
 * g_object_new is variadic, hence this wrapper. */
static inline IBusEngine *inkling_engine_new_with_focus_id(const gchar *name, const gchar *path,
                                                           GDBusConnection *connection) {
    return IBUS_ENGINE(g_object_new(IBUS_TYPE_ENGINE, "engine-name", name, "object-path", path, "connection",
                                    connection, "has-focus-id", TRUE, NULL));
}

/* No core dumps (systemd-coredump or apport would store the surrounding text and the preedit)
 * and no ptrace or /proc/<pid>/mem access by other processes of the user, as the cloud helper
 * does. prctl is variadic, hence this wrapper. Returns 0 on success. */
static inline int inkling_engine_harden_process(void) {
    struct rlimit none = { 0, 0 };
    int failed = setrlimit(RLIMIT_CORE, &none) != 0;
    failed |= prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L) != 0;
    return failed ? -1 : 0;
}

/* The engine started by a supervisor ends with it (SIGTERM when its parent dies), so no
 * orphaned engine keeps the bus name. Returns 0 on success. */
static inline int inkling_end_with_parent(void) {
    return prctl(PR_SET_PDEATHSIG, SIGTERM, 0L, 0L, 0L);
}

/* The C heap (issue 18: what the engine keeps): bytes handed out and still in use, and bytes the
 * allocator holds from the system (its arenas and large mappings). mallinfo2 is a plain struct
 * return, which Swift cannot call through the Glibc module. */
static inline size_t inkling_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
static inline size_t inkling_heap_held(void) {
    struct mallinfo2 info = mallinfo2();
    return info.arena + info.hblkhd;
}

/* Lowers the calling thread's priority (nice 10; Linux sets it per thread): work started at the
 * engine's start, such as reading the learned store, then never delays the thread that answers
 * keys on a busy machine. Returns 0 on success. */
static inline int inkling_lower_thread_priority(void) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
}

/* Gives the allocator's free pages back to the system (every arena, not only the top of the
 * main one): after a burst of temporary allocations, such as reading the learned store. */
static inline void inkling_heap_trim(void) { malloc_trim(0); }

#endif
