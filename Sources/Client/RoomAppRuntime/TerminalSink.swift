import Foundation
import TermCurses
import TermUI

/// The write end of the pipe the SIGWINCH handler pokes; -1 when none. Set before the handler is installed.
nonisolated(unsafe) private var resizePipeWrite: Int32 = -1
/// The handler that was installed before ours (ncurses' own), called after ours so ncurses still learns the size.
nonisolated(unsafe) private var previousResizeAction = sigaction()

/// Wakes the screen loop on SIGWINCH. The signal may land on any thread, so interrupting `poll` is not enough:
/// ncurses' handler, then only an async-signal-safe `write`.
private func resizeHandler(_ signal: Int32) {
    // ncurses first: the loop may wake on another thread the moment the byte lands, and must then find the size
    // change already noted, or it would read no resize key and sleep on.
    let previous = previousResizeAction.__sigaction_handler.sa_handler
    if let previous, unsafeBitCast(previous, to: Int.self) > 1 { previous(signal) }
    var byte: UInt8 = 1
    _ = write(resizePipeWrite, &byte, 1)
}

/// The real screen: draws through the ncurses adapter and reads its keys, sleeping in `poll` on the terminal,
/// the inbox's pipe and a pipe poked on every resize, together.
public final class TerminalSink: FrameSink {
    private let terminal: Terminal
    private let resizeRead: Int32

    public init(_ terminal: Terminal) {
        self.terminal = terminal
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
            resizePipeWrite = fds[1]
            var action = sigaction()
            action.__sigaction_handler.sa_handler = resizeHandler
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(SIGWINCH, &action, &previousResizeAction)
        }
        resizeRead = fds[0]
    }

    deinit {
        if resizeRead >= 0 {
            sigaction(SIGWINCH, &previousResizeAction, nil)
            let write = resizePipeWrite
            resizePipeWrite = -1
            close(write)
            close(resizeRead)
        }
    }

    public var width: Int { terminal.size.width }
    public var height: Int { terminal.size.height }

    public func draw(_ buffer: CellBuffer) { terminal.draw(buffer) }

    public func bell() { terminal.bell() }

    public func suspend() { terminal.suspend() }

    public func waitForKeys(milliseconds: Int, wakeDescriptor: Int32) -> [Key] {
        // Keys ncurses already buffered come first, without waiting.
        var keys = readAvailable()
        if !keys.isEmpty { return keys }
        var descriptors = [
            pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: resizeRead, events: Int16(POLLIN), revents: 0),
        ]
        let ready = poll(&descriptors, resizeRead >= 0 ? 3 : 2, Int32(clamping: milliseconds))
        if descriptors[2].revents != 0 {
            var drain = [UInt8](repeating: 0, count: 16)
            while read(resizeRead, &drain, drain.count) > 0 {}
        }
        // After a resize ncurses reports the new size as a key the next time it is asked for one.
        if ready < 0 || descriptors[0].revents != 0 || descriptors[2].revents != 0 { keys = readAvailable() }
        return keys
    }

    private func readAvailable() -> [Key] {
        var keys: [Key] = []
        while keys.count < 256, let key = terminal.readKey(timeout: 0) { keys.append(key) }
        return keys
    }
}
