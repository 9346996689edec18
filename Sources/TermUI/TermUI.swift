// TermUI
