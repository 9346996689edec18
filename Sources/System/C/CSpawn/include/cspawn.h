#ifndef CLUBROOM_CSPAWN_H
#define CLUBROOM_CSPAWN_H

#include <spawn.h>

/// posix_spawn_file_actions_addclosefrom_np(3): the child closes every descriptor from `lowest` up, whatever the
/// parent opened meanwhile; 0, or an error number.
int clubroom_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

#endif
