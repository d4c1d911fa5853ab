/* CArgon2: the reference Argon2 (pkg-config libargon2, apt libargon2-dev) for inkling-server's
 * password hashes (Argon2id); also getrandom(2) for salts and tokens. */
#ifndef INKLING_CARGON2_SHIM_H
#define INKLING_CARGON2_SHIM_H
#include <argon2.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/random.h>
#include <errno.h>

/* getrandom(2), blocking until the kernel's pool is ready; 0 on success. */
static inline int inkling_getrandom(void *buffer, size_t length) {
    size_t done = 0;
    while (done < length) {
        ssize_t got = getrandom((char *)buffer + done, length - done, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        done += (size_t)got;
    }
    return 0;
}

#endif
