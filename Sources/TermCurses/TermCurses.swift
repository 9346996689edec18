// TermCurses
