import Glibc

/// The longest thread name the kernel keeps, in bytes (`TASK_COMM_LEN` less its terminating zero).
public let maximumThreadNameBytes = 15

/// Names the calling thread as the kernel shows it (`ps -L`, `top -H`, `/proc/PID/task/*/comm`, profilers); the
/// kernel keeps the first 15 bytes. Foundation's `Thread.name` does not reach the kernel on Linux. Best effort:
/// a thread that cannot be named keeps its name. Not for a real-time loop: it allocates.
public func nameCurrentThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    let bytes = Array(name.utf8.prefix(maximumThreadNameBytes))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
}

/// Starts a detached thread that names itself `name` in the kernel, then runs `body`. Every thread Clubroom starts
/// starts here, so every one of them can be told apart in `top -H` and a profiler; the kernel keeps 15 bytes of a
/// name, so the names Clubroom gives are no longer than that. `stackSize` in bytes; 0 keeps the system's default. Creating a thread fails only when
/// the process is out of threads or memory, where nothing else could go on either: that stops the process.
public func startThread(named name: String, stackSize: Int = 0, _ body: @escaping @Sendable () -> Void) {
    final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    if stackSize > 0 { pthread_attr_setstacksize(&attributes, stackSize) }
    let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(
        &thread, &attributes,
        { argument in
            let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
            nameCurrentThread(start.name)
            start.body()
            return nil
        }, start)
    guard created == 0 else {
        Unmanaged<Start>.fromOpaque(start).release()
        fatalError("pthread_create for \(name): \(String(cString: strerror(created)))")
    }
}
