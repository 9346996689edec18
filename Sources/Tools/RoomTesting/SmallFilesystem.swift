import Foundation
import Glibc

/// A small filesystem of its own (a tmpfs of a given size) mounted at a folder that only the processes started
/// inside its mount namespace see, so a test can fill a disk without touching the machine's: when the holder
/// process ends, the namespace and the filesystem go with it.
///
/// Needs root, `unshare` and `nsenter` (util-linux); `unavailableReason` says what is missing, for a test's skip
/// message.
public final class SmallFilesystem: @unchecked Sendable {
    // Safe to share: everything is fixed after init; the holder is only killed.

    /// The folder the filesystem is mounted on (the same path inside and outside the namespace).
    public let mountPoint: String
    private let holder: Process

    /// Why a filesystem of its own cannot be made here, or `nil` when it can.
    public static let unavailableReason = missingRootOrTools(
        "a filesystem of a test's own needs root (to mount a tmpfs)", tools: ["unshare", "nsenter", "mount"],
        from: "util-linux")

    /// Mounts a tmpfs of `bytes` at `mountPoint` (created if missing) in a mount namespace of its own.
    public init(at mountPoint: String, bytes: Int) throws {
        self.mountPoint = mountPoint
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        holder = Process()
        holder.executableURL = URL(fileURLWithPath: findTool("unshare") ?? "/usr/bin/unshare")
        holder.arguments = [
            "--mount", "--propagation", "private", "sh", "-c",
            "mount -t tmpfs -o size=\(bytes),mode=0700 tmpfs \"$0\" && echo mounted && exec sleep 3600", mountPoint,
        ]
        let output = Pipe()
        holder.standardOutput = output
        holder.standardError = output
        holder.standardInput = FileHandle.nullDevice
        try holder.run()
        let lines = LineCollector(output.fileHandleForReading)
        guard lines.wait(timeout: 10, { $0 == "mounted" }) != nil else {
            stop()
            throw ChildProcessError.failed(
                command: ["unshare", "--mount", "mount -t tmpfs"], status: -1, standardError: lines.all.joined())
        }
    }

    deinit {
        stop()
    }

    /// `command` as run inside the namespace, where the filesystem is seen (nsenter execs it, keeping its PID).
    public func inside(_ command: [String]) -> [String] {
        [findTool("nsenter") ?? "nsenter", "-t", "\(holder.processIdentifier)", "-m", "--"] + command
    }

    /// A path under the mount point as this process reaches it (through the holder's view of the files).
    public func outside(_ path: String) -> String {
        "/proc/\(holder.processIdentifier)/root" + path
    }

    /// Fills the filesystem with one file until not a byte more fits; returns the file's path (outside view).
    @discardableResult
    public func fill(name: String = "filler") throws -> String {
        let path = outside(mountPoint + "/" + name)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard descriptor >= 0 else {
            throw ChildProcessError.failed(command: ["open", path], status: errno, standardError: "")
        }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0x2E, count: 64 * 1024)
        for size in [64 * 1024, 4096, 1] {
            while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, size) }) == size {}
        }
        return path
    }

    /// Removes what `fill` wrote.
    public func free(name: String = "filler") {
        unlink(outside(mountPoint + "/" + name))
    }

    /// Ends the holder, and with it the namespace and the filesystem.
    public func stop() {
        if holder.isRunning {
            kill(holder.processIdentifier, SIGKILL)
            holder.waitUntilExit()
        }
    }
}

/// Writes `script` (a `#!` line and its body) into a new file at `path` that its owner may run. Written through a
/// descriptor closed on exec, so that no child another test starts meanwhile keeps the file open for writing: Linux
/// refuses to run a file that anyone holds open for writing ("Text file busy").
public func writeScript(_ script: String, to path: String) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o700)
    guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    let bytes = Array(script.utf8)
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard close(descriptor) == 0, written == bytes.count else { throw POSIXError(.EIO) }
}
