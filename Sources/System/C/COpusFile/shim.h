#ifndef CLUBROOM_COPUSFILE_SHIM_H
#define CLUBROOM_COPUSFILE_SHIM_H

// libopusfile: reading Ogg Opus files, for a file played into a room.
#include <opus/opusfile.h>

#endif
