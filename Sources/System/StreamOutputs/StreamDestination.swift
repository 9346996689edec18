import Platform

/// Where a live stream of the room goes, as a person writes it on the command line.
public enum StreamDestination: Sendable, Equatable {
    /// Ogg Opus to an Icecast server, as a source client (`icecast://USER:PASSWORD@HOST:PORT/MOUNT.opus`).
    case icecast(IcecastAddress)
    /// HTTP Live Streaming into a folder a web server serves (`--hls DIR`).
    case hls(directory: String)
    /// FLV with AAC to an RTMP server (`rtmp://HOST[:PORT]/APP/KEY`).
    case rtmp(url: String)

    /// How reports and errors name the destination: never with a password or a stream key.
    public var name: String {
        switch self {
        case .icecast(let address): return "\(address.host):\(address.port)\(address.mount)"
        case .hls(let directory): return "HLS in \(directory)"
        case .rtmp(let url): return Self.rtmpName(url)
        }
    }

    /// Reads `icecast://USER:PASSWORD@HOST:PORT/MOUNT` (percent-escapes allowed in the user and password).
    public static func icecast(_ text: String) throws(StreamError) -> StreamDestination {
        .icecast(try IcecastAddress(text))
    }

    /// Reads `rtmp://HOST[:PORT]/APP/KEY`; the key is kept for the connection and never shown.
    public static func rtmp(_ text: String) throws(StreamError) -> StreamDestination {
        guard text.hasPrefix("rtmp://") else {
            throw .badDestination(text: "an RTMP address", problem: "it must start with rtmp://")
        }
        let rest = text.dropFirst("rtmp://".count)
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, !parts[0].isEmpty, !parts[1].isEmpty, !parts[parts.count - 1].isEmpty else {
            throw .badDestination(text: rtmpName(text), problem: "it must be rtmp://HOST/APP/KEY")
        }
        guard !parts[0].contains("@") else {
            throw .badDestination(
                text: rtmpName(text), problem: "put credentials in the stream key, not before the host")
        }
        return .rtmp(url: text)
    }

    /// The HLS folder: it must exist (the playlist and segments are written into it).
    public static func hls(_ path: String) throws(StreamError) -> StreamDestination {
        guard !path.isEmpty else { throw .badDestination(text: "HLS", problem: "the folder is empty") }
        return .hls(directory: path)
    }

    /// An RTMP URL without its last part (the stream key), for reports.
    static func rtmpName(_ url: String) -> String {
        guard let slash = url.lastIndex(of: "/"), url.hasPrefix("rtmp://"),
            slash > url.index(url.startIndex, offsetBy: 7)
        else { return "rtmp" }
        return String(url[..<slash])
    }
}

/// An Icecast mount and the source credentials for it.
public struct IcecastAddress: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String
    /// The mount, with its leading slash (`/live.opus`).
    public var mount: String
}

extension IcecastAddress {
    /// Reads `icecast://USER:PASSWORD@HOST:PORT/MOUNT`; the port defaults to 8000.
    public init(_ text: String) throws(StreamError) {
        guard text.hasPrefix("icecast://") else {
            throw .badDestination(text: "an Icecast address", problem: "it must start with icecast://")
        }
        let rest = text.dropFirst("icecast://".count)
        guard let at = rest.lastIndex(of: "@") else {
            throw .badDestination(
                text: "an Icecast address",
                problem: "it needs the source's user and password (icecast://USER:PASSWORD@HOST:PORT/MOUNT)")
        }
        let credentials = rest[..<at]
        let location = rest[rest.index(after: at)...]
        guard let colon = credentials.firstIndex(of: ":") else {
            throw .badDestination(
                text: "an Icecast address", problem: "it needs a password after the user (USER:PASSWORD@)")
        }
        guard let slash = location.firstIndex(of: "/") else {
            throw .badDestination(text: String(location), problem: "it needs a mount (HOST:PORT/MOUNT.opus)")
        }
        let hostPort = location[..<slash]
        let mount = String(location[slash...])
        var host = String(hostPort)
        var port = 8000
        if let portColon = hostPort.lastIndex(of: ":") {
            host = String(hostPort[..<portColon])
            guard let number = Int(hostPort[hostPort.index(after: portColon)...]), (1...65_535).contains(number) else {
                throw .badDestination(text: String(hostPort), problem: "the port must be a number from 1 to 65535")
            }
            port = number
        }
        guard !host.isEmpty else { throw .badDestination(text: String(location), problem: "the host is empty") }
        guard mount.count > 1 else { throw .badDestination(text: String(location), problem: "the mount is empty") }
        guard let user = PercentEncoding.decode(String(credentials[..<colon])),
            let password = PercentEncoding.decode(String(credentials[credentials.index(after: colon)...]))
        else {
            throw .badDestination(text: "\(host):\(port)\(mount)", problem: "the user or password has a bad %-escape")
        }
        guard !user.isEmpty, !password.isEmpty else {
            throw .badDestination(
                text: "\(host):\(port)\(mount)", problem: "the user and the password must not be empty")
        }
        self.init(host: host, port: port, user: user, password: password, mount: mount)
    }
}
