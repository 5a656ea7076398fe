/* test_version.c — the version macros of shiro.h, shiro_get_version() and the
 * project's version (argv[1], from meson.build) all say the same thing. */
#include <stdio.h>
#include <string.h>

#include "shiro.h"
#include "test_util.h"

int main(int argc, char **argv) {
  char made[64];
  snprintf(made, sizeof made, "%d.%d.%d", SHIRO_VERSION_MAJOR, SHIRO_VERSION_MINOR, SHIRO_VERSION_PATCH);
  EXPECT(strcmp(made, SHIRO_VERSION_STRING) == 0, "the parts %s, the string %s", made, SHIRO_VERSION_STRING);
  const char *v = shiro_get_version();
  EXPECT(v != NULL && strcmp(v, SHIRO_VERSION_STRING) == 0, "the library's %s, the header's %s", v ? v : "NULL",
         SHIRO_VERSION_STRING);
  EXPECT(v == shiro_get_version(), "the same static string on every call");
  if (argc > 1)
    EXPECT(strcmp(SHIRO_VERSION_STRING, argv[1]) == 0, "the header's %s, the project's %s", SHIRO_VERSION_STRING,
           argv[1]);
  if (test_failures == 0) printf("version %s: macros, library and project agree\n", v);
  return test_failures != 0;
}
