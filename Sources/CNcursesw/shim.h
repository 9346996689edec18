#ifndef CLUBROOM_CNCURSESW_SHIM_H
#define CLUBROOM_CNCURSESW_SHIM_H

#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
#include <ncursesw/ncurses.h>

// Macros and variadic functions are not visible to Swift; these wrappers are.
static inline int clubroom_getmaxy(WINDOW *w) { return getmaxy(w); }
static inline int clubroom_getmaxx(WINDOW *w) { return getmaxx(w); }
static inline int clubroom_color_pair(int n) { return (int)COLOR_PAIR(n); }
static inline int clubroom_key_resize(void) { return KEY_RESIZE; }
static inline int clubroom_attr_bold(void) { return (int)A_BOLD; }
static inline int clubroom_attr_reverse(void) { return (int)A_REVERSE; }
static inline int clubroom_attr_dim(void) { return (int)A_DIM; }
static inline int clubroom_attr_underline(void) { return (int)A_UNDERLINE; }
static inline WINDOW *clubroom_stdscr(void) { return stdscr; }
static inline int clubroom_colors(void) { return COLORS; }
static inline int clubroom_color_pairs(void) { return COLOR_PAIRS; }
static inline int clubroom_mvaddnwstr(int y, int x, const wchar_t *s, int n) { return mvaddnwstr(y, x, s, n); }
static inline int clubroom_attrset(int a) { return attrset(a); }
static inline int clubroom_get_wch(wint_t *ch) { return get_wch(ch); }
static inline int clubroom_set_escdelay(int ms) { return set_escdelay(ms); }

#endif
