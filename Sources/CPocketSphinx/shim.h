/* CPocketSphinx: PocketSphinx (pkg-config pocketsphinx) and libpulse-simple for the
 * `inkling-dictate` helper.
 *
 * cmd_ln_init and prctl are variadic, which Swift cannot call: small static inline wrappers
 * stand in for them (no separate C target needed).
 */
#ifndef INKLING_CPOCKETSPHINX_SHIM_H
#define INKLING_CPOCKETSPHINX_SHIM_H

#include <pocketsphinx.h>
#include <sphinxbase/err.h>
#include <pulse/simple.h>
#include <pulse/error.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>

/* A decoder for the model in `hmm` with dictionary `dict` and language model `lm`, all logging
 * off (PocketSphinx logs hypotheses at INFO level: nothing heard may reach a log). NULL on
 * failure. */
static inline ps_decoder_t *inkling_ps_new(const char *hmm, const char *dict, const char *lm) {
    err_set_logfp(NULL);
    cmd_ln_t *config = cmd_ln_init(NULL, ps_args(), TRUE,
                                   "-hmm", hmm, "-dict", dict, "-lm", lm,
                                   "-logfn", "/dev/null", NULL);
    if (config == NULL) return NULL;
    ps_decoder_t *decoder = ps_init(config);
    cmd_ln_free_r(config);
    return decoder;
}

/* Recording from the default (or named) source of the desktop's sound server: 16 kHz mono
 * signed 16-bit, fragments of about 100 ms so levels and partials stay live. */
static inline pa_simple *inkling_pulse_record(const char *device, int *error) {
    pa_sample_spec spec;
    spec.format = PA_SAMPLE_S16LE;
    spec.rate = 16000;
    spec.channels = 1;
    pa_buffer_attr attributes;
    attributes.maxlength = (uint32_t)-1;
    attributes.tlength = (uint32_t)-1;
    attributes.prebuf = (uint32_t)-1;
    attributes.minreq = (uint32_t)-1;
    attributes.fragsize = 3200;
    return pa_simple_new(NULL, "Inkling dictation", PA_STREAM_RECORD, device, "dictation",
                         &spec, NULL, &attributes, error);
}

/* No core dumps (they would hold what was heard) and no ptrace or /proc/<pid>/mem access by
 * other processes of the user. Returns 0 on success. */
static inline int inkling_dictate_harden_process(void) {
    struct rlimit none = { 0, 0 };
    int failed = setrlimit(RLIMIT_CORE, &none) != 0;
    failed |= prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L) != 0;
    return failed ? -1 : 0;
}

#endif
