/* CCurl: libcurl (pkg-config libcurl) for the `inkling-cloud` helper and `inkling packs`.
 *
 * curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: typed
 * static inline wrappers stand in for them (no separate C target needed).
 */
#ifndef INKLING_CCURL_SHIM_H
#define INKLING_CCURL_SHIM_H

#include <curl/curl.h>
#include <sys/prctl.h>
#include <sys/resource.h>

typedef size_t (*inkling_curl_write_callback)(char *data, size_t size, size_t count, void *user);
typedef int (*inkling_curl_xferinfo_callback)(void *user, curl_off_t dltotal, curl_off_t dlnow,
                                              curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode inkling_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode inkling_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode inkling_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode inkling_curl_set_headers(CURL *handle, struct curl_slist *headers) {
    return curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
}

static inline CURLcode inkling_curl_set_post_body(CURL *handle, const char *body, long length) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE, length);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(handle, CURLOPT_COPYPOSTFIELDS, body);
}

static inline CURLcode inkling_curl_set_write(CURL *handle, inkling_curl_write_callback callback, void *user) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(handle, CURLOPT_WRITEDATA, user);
}

static inline CURLcode inkling_curl_set_xferinfo(CURL *handle, inkling_curl_xferinfo_callback callback, void *user) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
    if (code != CURLE_OK) return code;
    code = curl_easy_setopt(handle, CURLOPT_XFERINFODATA, user);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
}

/* Response headers, one line per call (libcurl's CURLOPT_HEADERFUNCTION; same shape as a write
 * callback). Used by the cloud helper's account mode for `Inkling-Rotate-Token`. */
static inline CURLcode inkling_curl_set_header_callback(CURL *handle, inkling_curl_write_callback callback, void *user) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(handle, CURLOPT_HEADERDATA, user);
}

static inline long inkling_curl_response_code(CURL *handle) {
    long code = 0;
    if (curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) return 0;
    return code;
}

/* The Location a 3xx response points to (absolute), or NULL; valid until the next transfer. */
static inline const char *inkling_curl_redirect_url(CURL *handle) {
    char *url = NULL;
    if (curl_easy_getinfo(handle, CURLINFO_REDIRECT_URL, &url) != CURLE_OK) return NULL;
    return url;
}

/* Not libcurl, but only the helper imports this module: no core dumps (they would hold typed
 * text and the key) and no ptrace or /proc/<pid>/mem access by other processes of the user.
 * prctl is variadic, hence this wrapper. Returns 0 on success. */
static inline int inkling_harden_process(void) {
    struct rlimit none = { 0, 0 };
    int failed = setrlimit(RLIMIT_CORE, &none) != 0;
    failed |= prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L) != 0;
    return failed ? -1 : 0;
}

#endif
