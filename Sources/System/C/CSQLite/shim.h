#ifndef CLUBROOM_CSQLITE_SHIM_H
#define CLUBROOM_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a destructor pointer; Swift cannot spell it.
static inline sqlite3_destructor_type clubroom_sqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
