#ifndef CLUBROOM_CSHOUT_SHIM_H
#define CLUBROOM_CSHOUT_SHIM_H

// libshout: the Icecast source client (Debian's libshout3-dev).
#include <shout/shout.h>

#endif
