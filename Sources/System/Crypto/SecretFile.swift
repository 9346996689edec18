import Glibc

/// The server's token-signing secret. Its description never shows the bytes, so it is safe to log by accident.
public struct TokenSecret: Sendable, Equatable, CustomStringConvertible {
    /// The raw key for HMAC-SHA256.
    public let bytes: [UInt8]

    public var description: String { "TokenSecret(\(bytes.count) bytes)" }
}

/// Why a secret file could not be used. `path` names the file; `problem` says what is wrong with it.
public struct SecretFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Problem: Sendable, Equatable {
        /// The file or its folder could not be created (the system's reason).
        case cannotCreate(String)
        /// The file exists but could not be opened or read (the system's reason).
        case cannotRead(String)
        /// There is no file at the path (only the server creates one).
        case missing
        /// The path is a folder, a device or another kind of non-regular file.
        case notARegularFile
        /// Group or others may read or write it; `mode` holds the permission bits.
        case permissionsTooOpen(mode: UInt32)
        /// The file holds something other than hexadecimal text.
        case notHex
        /// The secret is shorter than `SecretFile.minimumBytes`.
        case tooShort(bytes: Int)
        /// The file belongs to another user than the server's (`owner` is its user ID): whoever owns it can change
        /// the secret under the server.
        case notOwned(owner: UInt32)
    }

    /// The secret file's path.
    public var path: String
    /// What is wrong.
    public var problem: Problem

    public var description: String {
        switch problem {
        case .cannotCreate(let reason):
            "secret file \(path): cannot create it: \(reason)"
        case .cannotRead(let reason):
            "secret file \(path): cannot read it: \(reason)"
        case .missing:
            "there is no server secret at \(path); start the server first (clubroom serve creates it), or give "
                + "the file the server uses with --secret-file FILE (or its --data DIR)"
        case .notARegularFile:
            "secret file \(path): not a regular file"
        case .permissionsTooOpen(let mode):
            "secret file \(path): permissions \(String(mode, radix: 8)) let others read it; run chmod 600 \(path)"
        case .notHex:
            "secret file \(path): expected hexadecimal text (64 or more hex digits)"
        case .tooShort(let bytes):
            "secret file \(path): secret is \(bytes) bytes, at least \(SecretFile.minimumBytes) are needed"
        case .notOwned(let owner):
            "secret file \(path): it belongs to user \(owner), not to the user the server runs as (\(geteuid())); "
                + "give it to that user (chown)"
        }
    }
}

/// The file holding the server's token-signing secret.
///
/// Format: the secret as lowercase hexadecimal text on one line (64 digits for the 32 random bytes written when
/// the file is created), followed by a newline. Surrounding whitespace is ignored when reading; upper-case digits
/// are accepted. The file must be a regular file with no permissions for group or others (mode 0600 or 0400).
public enum SecretFile {
    /// Bytes of secret written to a new file, and the least accepted from an existing one (HMAC-SHA256's output
    /// size, as RFC 7518 §3.2 requires of HS256 keys).
    public static let minimumBytes = 32

    /// Largest file read, so a wrong path to a huge file fails fast.
    public static let maximumFileBytes = 4096

    /// Loads the secret at `path`, or creates the file with a new random secret (mode 0600) when it is missing.
    ///
    /// Missing parent folders are created with mode 0700. Creation is atomic (written to a temporary file, then
    /// linked into place), so two processes starting together agree on one secret.
    /// The server's own secret, so it must also belong to the user the server runs as.
    public static func loadOrCreate(at path: String) throws(SecretFileError) -> TokenSecret {
        var status = stat()
        if lstat(path, &status) == 0 {
            return try load(at: path, mustBeOwn: true)
        }
        let openError = errno
        guard openError == ENOENT else {
            throw SecretFileError(path: path, problem: .cannotRead(systemMessage(openError)))
        }
        return try create(at: path)
    }

    /// Loads the secret at `path`, refusing a file that is missing, too open, too short or not hex. Only the server
    /// creates a secret (`loadOrCreate`): a token signed with a new one no server would accept.
    /// With `mustBeOwn`, a file that belongs to another user is refused too.
    public static func load(at path: String, mustBeOwn: Bool = false) throws(SecretFileError) -> TokenSecret {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            let reason = errno
            if reason == ELOOP {
                throw SecretFileError(path: path, problem: .notARegularFile)
            }
            if reason == ENOENT {
                throw SecretFileError(path: path, problem: .missing)
            }
            throw SecretFileError(path: path, problem: .cannotRead(systemMessage(reason)))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw SecretFileError(path: path, problem: .cannotRead(systemMessage(errno)))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw SecretFileError(path: path, problem: .notARegularFile)
        }
        let permissions = UInt32(status.st_mode) & 0o777
        guard permissions & 0o077 == 0 else {
            throw SecretFileError(path: path, problem: .permissionsTooOpen(mode: permissions))
        }
        guard !mustBeOwn || status.st_uid == geteuid() else {
            throw SecretFileError(path: path, problem: .notOwned(owner: status.st_uid))
        }
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR {
                    continue
                }
                throw SecretFileError(path: path, problem: .cannotRead(systemMessage(errno)))
            }
            if count == 0 {
                break
            }
            contents.append(contentsOf: buffer.prefix(count))
            if contents.count > maximumFileBytes {
                throw SecretFileError(path: path, problem: .notHex)
            }
        }
        guard let secret = decodeHex(contents) else {
            throw SecretFileError(path: path, problem: .notHex)
        }
        guard secret.count >= minimumBytes else {
            throw SecretFileError(path: path, problem: .tooShort(bytes: secret.count))
        }
        return TokenSecret(bytes: secret)
    }

    /// Lowercase hexadecimal text of `bytes`.
    public static func encodeHex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Bytes of hexadecimal text with surrounding ASCII whitespace; `nil` for anything else, including nothing.
    static func decodeHex(_ text: [UInt8]) -> [UInt8]? {
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        guard let first = text.firstIndex(where: { !whitespace.contains($0) }),
            let last = text.lastIndex(where: { !whitespace.contains($0) })
        else {
            return nil
        }
        let digits = text[first...last]
        guard digits.count % 2 == 0 else {
            return nil
        }
        var output: [UInt8] = []
        output.reserveCapacity(digits.count / 2)
        var high: UInt8? = nil
        for character in digits {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let pending = high {
                output.append(pending << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return output
    }

    private static func create(at path: String) throws(SecretFileError) -> TokenSecret {
        try createParentFolders(of: path)
        let secret: [UInt8]
        do {
            secret = try SecureRandom.bytes(minimumBytes)
        } catch {
            throw SecretFileError(path: path, problem: .cannotCreate(error.description))
        }
        let suffix: String
        do {
            suffix = encodeHex(try SecureRandom.bytes(8))
        } catch {
            throw SecretFileError(path: path, problem: .cannotCreate(error.description))
        }
        let temporary = path + ".new-" + suffix
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SecretFileError(path: path, problem: .cannotCreate(systemMessage(errno)))
        }
        let contents = Array((encodeHex(secret) + "\n").utf8)
        var written = 0
        var failure: Int32? = nil
        while written < contents.count {
            let count = contents[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR {
                    continue
                }
                failure = errno
                break
            }
            written += count
        }
        if failure == nil, fsync(descriptor) != 0 {
            failure = errno
        }
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw SecretFileError(path: path, problem: .cannotCreate(systemMessage(failure)))
        }
        // link() refuses to replace an existing file, so a secret another process created first wins.
        let linked = link(temporary, path)
        let linkError = errno
        unlink(temporary)
        if linked != 0 {
            if linkError == EEXIST {
                return try load(at: path)
            }
            throw SecretFileError(path: path, problem: .cannotCreate(systemMessage(linkError)))
        }
        return TokenSecret(bytes: secret)
    }

    private static func createParentFolders(of path: String) throws(SecretFileError) {
        var components = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        guard !components.isEmpty else {
            return
        }
        var missing: [String] = []
        while !components.isEmpty {
            let folder = components.joined(separator: "/")
            if folder.isEmpty {
                break
            }
            var status = stat()
            if stat(folder, &status) == 0 {
                break
            }
            missing.append(folder)
            components = components.dropLast()
        }
        for folder in missing.reversed() {
            if mkdir(folder, 0o700) != 0 {
                let reason = errno
                // Another process may have made it in the meantime; that is as good as making it.
                guard reason == EEXIST else {
                    throw SecretFileError(
                        path: path, problem: .cannotCreate("folder \(folder): \(systemMessage(reason))"))
                }
            }
        }
    }

    static func systemMessage(_ code: Int32) -> String {
        guard let text = strerror(code) else {
            return "error \(code)"
        }
        return String(cString: text)
    }
}
