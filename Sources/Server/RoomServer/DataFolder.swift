import Glibc
import RoomPersistence

/// The data folder the server keeps its database, journal and secret in, checked before anything is opened.
enum DataFolder {
    /// The file the write check creates and removes.
    static let probeName = ".clubroom-write-check"

    /// Makes sure the server can keep its files in `directory`: creates it (and missing parents) with mode 0700
    /// when it does not exist, refuses one it cannot write to (a read-only file system, no permission) and one that
    /// group or others may write to (they could replace the database or the secret) with one line, and warns once
    /// when every user of the machine may read it. The write check creates a file of its own name that must not
    /// exist yet and is never a symbolic link (`O_EXCL | O_NOFOLLOW`): a link planted there cannot make the server
    /// create or truncate a file elsewhere. Returns whether the folder's disk is full (it took not one more byte):
    /// the server then starts read-only (`SavedRooms.startProblem`) rather than not at all.
    static func prepare(_ directory: String, log: ServerLog) throws(ServerStartError) -> Bool {
        let place = "data directory \(directory)"
        var info = stat()
        if stat(directory, &info) != 0 {
            guard errno == ENOENT else { throw ServerStartError(place: place, problem: Self.reason(errno)) }
            try create(directory, place: place)
        } else if info.st_mode & S_IFMT != S_IFDIR {
            throw ServerStartError(place: place, problem: "it is not a folder")
        } else if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            throw ServerStartError(
                place: place,
                problem: "group or other users may write to it (mode \(String(info.st_mode & 0o777, radix: 8))), and "
                    + "so replace the database or the secret; 'chmod go-w \(directory)' (or 700) fixes it")
        } else if info.st_mode & S_IROTH != 0 {
            log.warning(
                "\(place) can be read by every user of this machine (mode \(String(info.st_mode & 0o777, radix: 8))): "
                    + "it holds the rooms' chat and the secret that signs tokens; 'chmod 700 \(directory)' makes it "
                    + "private")
        }
        let probe = directory + "/" + probeName
        // A check file left by a server that was killed during its check is removed first (not followed if it is
        // a link: unlink removes the link itself).
        unlink(probe)
        let descriptor = open(probe, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0o600)
        // A full disk passes: the server starts read-only.
        if descriptor < 0 && (errno == ENOSPC || errno == EDQUOT) { return true }
        guard descriptor >= 0 else {
            throw ServerStartError(
                place: place,
                problem: "the server cannot write there (\(Self.reason(errno))); it keeps its database there")
        }
        // One byte, which a disk with no room left refuses (an empty file needs no room).
        var byte: UInt8 = 0x2E
        let full = write(descriptor, &byte, 1) < 0 && (errno == ENOSPC || errno == EDQUOT)
        close(descriptor)
        unlink(probe)
        return full
    }

    /// Creates `directory` and its missing parents; the folder itself gets mode 0700 whatever the umask.
    private static func create(_ directory: String, place: String) throws(ServerStartError) {
        var path = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            path += "/" + component
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw ServerStartError(place: place, problem: "cannot create \(path): \(Self.reason(errno))")
            }
        }
        if chmod(directory, 0o700) != 0 {
            throw ServerStartError(place: place, problem: Self.reason(errno))
        }
    }

    private static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
