/* CXkbCommon: libxkbcommon's Compose API (pkg-config xkbcommon) for the engine.
 *
 * Only the compose tables are used: the engine receives keysyms from IBus, so no keymap is
 * compiled here. Swift imports the header as it is; nothing needs an inline wrapper.
 */
#ifndef INKLING_CXKBCOMMON_SHIM_H
#define INKLING_CXKBCOMMON_SHIM_H

#include <xkbcommon/xkbcommon.h>
#include <xkbcommon/xkbcommon-compose.h>

#endif
