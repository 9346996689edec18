import Crypto
import Foundation
import RoomTokens

/// A fresh temporary folder for a benchmark's `clubroom serve` child: a new token secret in it, an issuer for that
/// secret, and the arguments that serve the folder's data on a free loopback port. ``remove()`` deletes it.
public struct ServerFolder {
    /// The folder.
    public let url: URL
    /// The token secret's file, in the folder.
    public let secretPath: String
    /// Issues tokens the server accepts.
    public let issuer: TokenIssuer

    /// Makes the folder (named `prefix` and a UUID) and the secret in it.
    public init(prefix: String = "clubroom-bench") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        secretPath = url.appendingPathComponent("secret").path
        issuer = TokenIssuer(secret: try SecretFile.loadOrCreate(at: secretPath))
    }

    /// `serve` on a free port of 127.0.0.1, its data and secret in the folder.
    public var serveArguments: [String] {
        [
            "serve", "--listen", "127.0.0.1:0", "--data", url.appendingPathComponent("data").path, "--secret-file",
            secretPath,
        ]
    }

    /// Deletes the folder and what is in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
