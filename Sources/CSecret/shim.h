/* CSecret: libsecret (pkg-config libsecret-1) for the `inkling-cloud` helper's API key.
 *
 * The key is stored under the schema `org.freedesktop.ibus.engine.inkling.cloud` with one
 * attribute, `endpoint` (the endpoint URL without trailing slashes), e.g.
 *   secret-tool store --label='Inkling cloud check' \
 *       xdg:schema org.freedesktop.ibus.engine.inkling.cloud endpoint https://api.openai.com/v1
 * secret_password_lookup_sync is variadic, so a static inline wrapper stands in for it.
 */
#ifndef INKLING_CSECRET_SHIM_H
#define INKLING_CSECRET_SHIM_H

#include <libsecret/secret.h>

static inline const SecretSchema *inkling_secret_schema(void) {
    static const SecretSchema schema = {
        "org.freedesktop.ibus.engine.inkling.cloud",
        SECRET_SCHEMA_NONE,
        {
            { "endpoint", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { NULL, (SecretSchemaAttributeType)0 },
        },
    };
    return &schema;
}

/* The stored key for `endpoint`, or NULL (none stored, no keyring, locked and not unlocked).
 * Free with inkling_secret_free, which wipes the memory. Errors are dropped: the caller only
 * needs to know whether a key was found. */
static inline gchar *inkling_secret_lookup(const char *endpoint) {
    GError *error = NULL;
    gchar *password = secret_password_lookup_sync(inkling_secret_schema(), NULL, &error,
                                                  "endpoint", endpoint, NULL);
    if (error != NULL) {
        g_error_free(error);
        if (password != NULL) secret_password_free(password);
        return NULL;
    }
    return password;
}

static inline void inkling_secret_free(gchar *password) {
    if (password != NULL) secret_password_free(password);
}

#endif
