#ifndef CLUBROOM_CNCURSESW_SHIM_H
#define CLUBROOM_CNCURSESW_SHIM_H

#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
#include <langinfo.h>
#include <signal.h>
#include <pthread.h>
#include <string.h>
#include <stdint.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>
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

static inline int clubroom_attr_set(int attrs, int pair) { return attr_set((attr_t)attrs, (short)pair, NULL); }
static inline int clubroom_attr_normal(void) { return (int)A_NORMAL; }
static inline int clubroom_key_f0(void) { return KEY_F0; }
static inline void clubroom_timeout(int ms) { timeout(ms); }
static inline SCREEN *clubroom_newterm(void) { return newterm(NULL, stdout, stdin); }
static inline int clubroom_locale_is_utf8(void) { return strcmp(nl_langinfo(CODESET), "UTF-8") == 0; }
static inline int clubroom_beep(void) { return beep(); }

// The mouse wheel only: ncurses reports buttons 4 and 5 (wheel up and down) as KEY_MOUSE events.
static inline int clubroom_key_mouse(void) { return KEY_MOUSE; }
static inline void clubroom_enable_wheel(void) {
    mousemask(BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
}
/// 1 for wheel up, -1 for wheel down, 0 for anything else.
static inline int clubroom_read_wheel(void) {
    MEVENT event;
    if (getmouse(&event) != OK) return 0;
    if (event.bstate & BUTTON4_PRESSED) return 1;
#ifdef BUTTON5_PRESSED
    if (event.bstate & BUTTON5_PRESSED) return -1;
#endif
    return 0;
}

/// Stops the program as Ctrl-Z does in a shell (the terminal is given back first, as for vim or htop) and
/// takes the screen again once it continues. Returns when the process has been continued (`fg`).
static inline void clubroom_suspend(void) {
    def_prog_mode();
    endwin();
    struct sigaction previous, stop;
    memset(&stop, 0, sizeof stop);
    stop.sa_handler = SIG_DFL;
    sigemptyset(&stop.sa_mask);
    sigaction(SIGTSTP, &stop, &previous);
    // The stop is raised on this thread, with SIGTSTP unblocked here, so it takes effect before raise returns:
    // sent to the process, it would reach whichever thread does not block it, later, after the handler is put
    // back. The shell's fg continues the whole job.
    sigset_t tstp, mask;
    sigemptyset(&tstp);
    sigaddset(&tstp, SIGTSTP);
    pthread_sigmask(SIG_UNBLOCK, &tstp, &mask);
    raise(SIGTSTP);
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    sigaction(SIGTSTP, &previous, NULL);
    reset_prog_mode();
    clearok(curscr, TRUE);
    refresh();
}

// Restoring the terminal from a signal handler may only use async-signal-safe calls, so everything the handler
// needs (the tty modes from before the screen started and the terminal's own exit strings) is prepared ahead of
// time here. The state is static to this header: call these functions from a single Swift source file so that
// file's object holds the only copy. Each static has an initializer: Swift does not emit tentative definitions.
static struct termios clubroom_saved_tty = {0};
static volatile sig_atomic_t clubroom_tty_saved = 0;
static volatile sig_atomic_t clubroom_screen_active = 0;
enum { clubroom_exit_capacity = 512 };
static char clubroom_exit_sequence[clubroom_exit_capacity] = {0};
static volatile size_t clubroom_exit_length = 0;

/// Saves the tty modes; call before the screen starts.
static inline void clubroom_save_tty(void) {
    if (tcgetattr(STDIN_FILENO, &clubroom_saved_tty) == 0) clubroom_tty_saved = 1;
}

static inline void clubroom_append_capability(const char *name) {
    char *value = tigetstr(name);
    if (value == NULL || value == (char *)-1) return;
    size_t length = strlen(value);
    if (clubroom_exit_length + length >= clubroom_exit_capacity) return;
    memcpy(clubroom_exit_sequence + clubroom_exit_length, value, length);
    clubroom_exit_length += length;
}

/// Records the terminal's exit strings and marks the screen active; call after the screen started.
static inline void clubroom_prepare_restore(void) {
    clubroom_exit_length = 0;
    clubroom_append_capability("sgr0");
    clubroom_append_capability("cnorm");
    clubroom_append_capability("rmkx");
    clubroom_append_capability("rmcup");
    clubroom_screen_active = 1;
}

/// Whether a screen is started and not yet ended.
static inline int clubroom_is_screen_active(void) { return clubroom_screen_active; }

/// Ends the screen once; later calls do nothing. Not for signal handlers.
static inline int clubroom_end_screen(void) {
    if (!clubroom_screen_active) return 0;
    clubroom_screen_active = 0;
    endwin();
    return 1;
}

static void clubroom_on_fatal_signal(int signal_number) {
    if (clubroom_screen_active) {
        clubroom_screen_active = 0;
        if (clubroom_exit_length > 0) {
            ssize_t written = write(STDOUT_FILENO, clubroom_exit_sequence, clubroom_exit_length);
            (void)written;
        }
        if (clubroom_tty_saved) tcsetattr(STDIN_FILENO, TCSANOW, &clubroom_saved_tty);
    }
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

static void clubroom_restore_at_exit(void) { clubroom_end_screen(); }

/// Restores the terminal on SIGINT, SIGTERM, SIGHUP and SIGQUIT (then lets the signal do what it would have
/// done), and at exit. Returns 0, or -1 when a handler could not be installed.
static inline int clubroom_install_restore_handlers(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = clubroom_on_fatal_signal;
    sigemptyset(&action.sa_mask);
    int result = 0;
    const int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (unsigned i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        if (sigaction(signals[i], &action, NULL) != 0) result = -1;
    }
    static int registered = 0;
    if (!registered) {
        if (atexit(clubroom_restore_at_exit) != 0) result = -1;
        registered = 1;
    }
    return result;
}

#endif
