import Glibc

/// Names the calling thread as the kernel shows it (`ps -L`, `top -H`, `/proc/PID/task/*/comm`, profilers); the
/// kernel keeps the first 15 bytes. Foundation's `Thread.name` does not reach the kernel on Linux. Best effort:
/// a thread that cannot be named keeps its name. Not for a real-time loop: it allocates.
public func nameCurrentThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
}
