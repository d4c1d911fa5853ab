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

/* Device tokens of an Inkling Server (`inkling account login`), under the schema
 * `org.freedesktop.ibus.engine.inkling.account` with one attribute, `server` (the server URL
 * without trailing slashes). The secret is a small JSON record (token, device id, expiry, user);
 * only `inkling account` and the `inkling-cloud` helper read or write it, never the engine. */
static inline const SecretSchema *inkling_account_schema(void) {
    static const SecretSchema schema = {
        "org.freedesktop.ibus.engine.inkling.account",
        SECRET_SCHEMA_NONE,
        {
            { "server", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { NULL, (SecretSchemaAttributeType)0 },
        },
    };
    return &schema;
}

/* The stored record for `server`, or NULL (none, no keyring, locked). On a keyring error
 * `*failure` (when not NULL) gets a copy of the message, to be freed with g_free. Free the record
 * with inkling_secret_free. */
static inline gchar *inkling_account_lookup(const char *server, gchar **failure) {
    GError *error = NULL;
    gchar *password = secret_password_lookup_sync(inkling_account_schema(), NULL, &error,
                                                  "server", server, NULL);
    if (error != NULL) {
        if (failure != NULL) *failure = g_strdup(error->message);
        g_error_free(error);
        if (password != NULL) secret_password_free(password);
        return NULL;
    }
    return password;
}

/* Stores (or replaces) the record for `server` in the default collection. Returns 0 on success;
 * otherwise -1 and, when `failure` is not NULL, a copy of the keyring's message (g_free). */
static inline int inkling_account_store(const char *server, const char *label, const char *record, gchar **failure) {
    GError *error = NULL;
    gboolean stored = secret_password_store_sync(inkling_account_schema(), SECRET_COLLECTION_DEFAULT,
                                                 label, record, NULL, &error, "server", server, NULL);
    if (error != NULL) {
        if (failure != NULL) *failure = g_strdup(error->message);
        g_error_free(error);
        return -1;
    }
    return stored ? 0 : -1;
}

/* Deletes the record for `server`. Returns 1 when one was deleted, 0 when there was none, -1 on
 * a keyring error (message in `*failure` as above). */
static inline int inkling_account_clear(const char *server, gchar **failure) {
    GError *error = NULL;
    gboolean removed = secret_password_clear_sync(inkling_account_schema(), NULL, &error, "server", server, NULL);
    if (error != NULL) {
        if (failure != NULL) *failure = g_strdup(error->message);
        g_error_free(error);
        return -1;
    }
    return removed ? 1 : 0;
}

#endif
