/* version.c — the library's version at run time (shiro_get_version). */
#include "shiro.h"

const char *shiro_get_version(void) { return SHIRO_VERSION_STRING; }
