// posix_spawn_file_actions_addclosefrom_np is a GNU extension (glibc 2.34), declared only with _GNU_SOURCE, which
// Swift's Glibc module is not built with: hence a C file of its own.
#define _GNU_SOURCE
#include "cspawn.h"

int clubroom_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
