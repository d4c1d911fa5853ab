/* CGio: GIO (pkg-config gio-2.0) for the `inkling` CLI, which reads and writes the engine's
 * settings through GSettings. InklingCore never imports C; only the CLI uses this module. */
#ifndef INKLING_CGIO_SHIM_H
#define INKLING_CGIO_SHIM_H

#include <gio/gio.h>

#endif
