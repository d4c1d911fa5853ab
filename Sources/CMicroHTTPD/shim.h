/* CMicroHTTPD: GNU libmicrohttpd (pkg-config libmicrohttpd, apt libmicrohttpd-dev) for
 * inkling-server. MHD_start_daemon and MHD_get_connection_info are variadic, which Swift cannot
 * call: typed static inline wrappers stand in for them. */
#ifndef INKLING_CMICROHTTPD_SHIM_H
#define INKLING_CMICROHTTPD_SHIM_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/* Starts the daemon: its own listening thread pool (epoll where available), a connection limit,
 * an inactivity timeout, a per-connection memory limit (which bounds the request headers), and
 * TLS when a key and certificate (PEM text) are given. Connections may be suspended (a check
 * waiting on the upstream in another thread) and resumed from any thread. */
static inline struct MHD_Daemon *inkling_mhd_start(
    const struct sockaddr *address, int ipv6, unsigned int threads, unsigned int connection_limit,
    unsigned int timeout_seconds, size_t memory_limit, const char *tls_key, const char *tls_cert,
    MHD_AccessHandlerCallback handler, void *handler_context,
    MHD_RequestCompletedCallback completed, void *completed_context,
    MHD_NotifyConnectionCallback notify, void *notify_context) {
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_SUPPRESS_DATE_NO_CLOCK
        | MHD_ALLOW_SUSPEND_RESUME;
    if (ipv6) flags |= MHD_USE_IPv6;
    if (tls_key != NULL && tls_cert != NULL) {
        flags |= MHD_USE_TLS;
        return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
            MHD_OPTION_SOCK_ADDR, address,
            MHD_OPTION_THREAD_POOL_SIZE, threads,
            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
            MHD_OPTION_NOTIFY_CONNECTION, notify, notify_context,
            MHD_OPTION_HTTPS_MEM_KEY, tls_key,
            MHD_OPTION_HTTPS_MEM_CERT, tls_cert,
            MHD_OPTION_END);
    }
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
        MHD_OPTION_NOTIFY_CONNECTION, notify, notify_context,
        MHD_OPTION_END);
}

/* The connection's socket (owned by the library: only ever shut down, never closed, by us). */
static inline int inkling_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/* The pointer stored by the connection-notify callback. */
static inline void *inkling_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/* The client's address as text into buffer (empty when unknown). */
static inline void inkling_mhd_client_address(struct MHD_Connection *connection, char *buffer, socklen_t size) {
    buffer[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr) return;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, size);
    } else if (address->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, size);
    }
}

/* The port the daemon listens on (for port 0: the one the kernel chose). */
static inline unsigned int inkling_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

#endif
