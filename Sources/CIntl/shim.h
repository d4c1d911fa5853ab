/* gettext (glibc's libintl) and setlocale for InklingGettext; part of libc, nothing to link. */
#include <libintl.h>
#include <locale.h>
