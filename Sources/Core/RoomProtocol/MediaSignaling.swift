import MediaWire
import StrictJSON

/// The media messages of the control protocol (see docs/media.md): how a client learns where to send audio,
/// with which SSRC and keys, and how it tells the server which path its media takes.
public enum MediaSignal: Sendable, Equatable {
    /// Server to client, right after `joined` (and after every reconnect): the media settings of this connection.
    case media(MediaOffer)
    /// Server to client: the room key changed (someone left or was removed); use it from now on.
    case mediaKey(roomKey: [UInt8], epoch: Int)
    /// Client to server: the path the client's media takes, `udp` or `websocket`, and whether the client takes
    /// RFC 2198 redundancy (RED) in what the server sends it (`"red": true`; absent, as from older clients, it
    /// gets the primary frames alone).
    case mediaPath(MediaPathKind, takesRED: Bool = false)
    /// Server to client: which peer sends with which SSRC, so a client can name the speakers it hears.
    case mediaSources([MediaSource])

    public var type: String {
        switch self {
        case .media: "media"
        case .mediaKey: "media_key"
        case .mediaPath: "media_path"
        case .mediaSources: "media_sources"
        }
    }
}

/// A peer's SSRC.
public struct MediaSource: Sendable, Equatable {
    public var peer: String
    public var ssrc: UInt32

    public init(peer: String, ssrc: UInt32) {
        self.peer = peer
        self.ssrc = ssrc
    }
}

/// Which way media travels between a client and the server.
public enum MediaPathKind: String, Sendable, Equatable {
    case udp
    case websocket
}

/// A connection's media settings.
public struct MediaOffer: Sendable, Equatable {
    /// Where the server receives media over UDP: an IPv4 address. Empty (with port 0) when the server knows no
    /// address this client can reach; the client then sends its media over the WebSocket from the start.
    public var host: String
    public var port: Int

    /// Whether the offer has a UDP address at all.
    public var hasUDP: Bool { !host.isEmpty }
    /// The SSRC this connection must send with (and which marks its RTCP).
    public var ssrc: UInt32
    /// The SSRC of the server's own RTCP reports.
    public var serverSSRC: UInt32
    public var payloadType: Int
    public var clockRate: Int
    /// The RFC 8285 one-byte extension ID of the RFC 6464 audio level.
    public var audioLevelID: Int
    /// The SRTP protection profile, as RFC 5764 names it.
    public var profile: String
    /// The SRTP master key and salt this connection protects its packets with (30 bytes).
    public var sendKey: [UInt8]
    /// The SRTP master key and salt the server protects the room's packets with (30 bytes).
    public var roomKey: [UInt8]
    public var epoch: Int
    /// The payload type of RFC 2198 redundancy (RED), when the server takes it and forwards it to those who say
    /// they take it (`media_path`'s `red`); nil from a server that does not (the client then never sends it).
    public var redPayloadType: Int?

    public init(
        host: String, port: Int, ssrc: UInt32, serverSSRC: UInt32,
        payloadType: Int = Int(RTPAudioProfile.opusPayloadType),
        clockRate: Int = Int(RTPAudioProfile.clockRate), audioLevelID: Int = Int(RTPAudioProfile.audioLevelExtensionID),
        profile: String = MediaOffer.srtpProfile, sendKey: [UInt8], roomKey: [UInt8], epoch: Int,
        redPayloadType: Int? = nil
    ) {
        self.redPayloadType = redPayloadType
        self.host = host
        self.port = port
        self.ssrc = ssrc
        self.serverSSRC = serverSSRC
        self.payloadType = payloadType
        self.clockRate = clockRate
        self.audioLevelID = audioLevelID
        self.profile = profile
        self.sendKey = sendKey
        self.roomKey = roomKey
        self.epoch = epoch
    }

    public static let srtpProfile = "AES_CM_128_HMAC_SHA1_80"
}

/// A media message that could not be read.
public struct MediaSignalError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { "media message: \(message)" }

    public init(message: String) {
        self.message = message
    }
}

/// JSON for the media messages, in the control protocol's strict form.
public enum MediaSignalCodec {
    static let parser = StrictJSONParser(maxDepth: 4, maxBytes: ControlLimits.maxFrameBytes)

    /// The message as JSON text.
    public static func encode(_ signal: MediaSignal) -> String {
        switch signal {
        case .media(let offer):
            let udp = offer.hasUDP ? "\"udp\":{\"host\":\(quote(offer.host)),\"port\":\(offer.port)}," : ""
            return "{\"type\":\"media\",\(udp)"
                + "\"ssrc\":\(offer.ssrc),\"server_ssrc\":\(offer.serverSSRC),\"payload_type\":\(offer.payloadType),"
                + "\"clock_rate\":\(offer.clockRate),\"audio_level_id\":\(offer.audioLevelID),"
                + "\"srtp_profile\":\(quote(offer.profile)),\"send_key\":\(quote(Base64URL.encode(offer.sendKey))),"
                + "\"room_key\":\(quote(Base64URL.encode(offer.roomKey))),\"epoch\":\(offer.epoch)"
                + (offer.redPayloadType.map { ",\"red_payload_type\":\($0)" } ?? "") + "}"
        case .mediaKey(let key, let epoch):
            return "{\"type\":\"media_key\",\"room_key\":\(quote(Base64URL.encode(key))),\"epoch\":\(epoch)}"
        case .mediaPath(let path, let takesRED):
            return "{\"type\":\"media_path\",\"path\":\(quote(path.rawValue))\(takesRED ? ",\"red\":true" : "")}"
        case .mediaSources(let sources):
            let list = sources.map { "{\"peer\":\(quote($0.peer)),\"ssrc\":\($0.ssrc)}" }.joined(separator: ",")
            return "{\"type\":\"media_sources\",\"sources\":[\(list)]}"
        }
    }

    /// Reads a media message; `nil` when the text is JSON but another type of message.
    public static func decode(_ text: String) throws(MediaSignalError) -> MediaSignal? {
        let value: JSONValue
        do {
            value = try parser.parse(text)
        } catch {
            throw MediaSignalError(message: "\(error)")
        }
        guard case .object(let object) = value, case .string(let type)? = object["type"] else { return nil }
        switch type {
        case "media":
            var host = ""
            var port = 0
            switch object["udp"] {
            case nil, .null?: break
            case .object(let udp)?:
                guard case .string(let text)? = udp["host"], !text.isEmpty else {
                    throw MediaSignalError(message: "\"udp\" needs \"host\" and \"port\"")
                }
                host = text
                port = try integer(udp, "port", 1...65535)
            default:
                throw MediaSignalError(message: "\"udp\" needs \"host\" and \"port\"")
            }
            var red: Int?
            if object["red_payload_type"] != nil {
                // 35–63 and 96–127: RFC 5761's ranges that no RTCP packet type can be mistaken for.
                red = try integer(object, "red_payload_type", 35...127)
                guard !(64...95).contains(red ?? 0) else {
                    throw MediaSignalError(message: "\"red_payload_type\" must be in 35...63 or 96...127")
                }
            }
            let offer = MediaOffer(
                host: host, port: port,
                ssrc: UInt32(try integer(object, "ssrc", 1...0xFFFF_FFFF)),
                serverSSRC: UInt32(try integer(object, "server_ssrc", 1...0xFFFF_FFFF)),
                payloadType: try integer(object, "payload_type", 96...127),
                clockRate: try integer(object, "clock_rate", 8000...192_000),
                audioLevelID: try integer(object, "audio_level_id", 1...14),
                profile: try string(object, "srtp_profile"), sendKey: try key(object, "send_key"),
                roomKey: try key(object, "room_key"), epoch: try integer(object, "epoch", 0...Int(Int32.max)),
                redPayloadType: red)
            guard red != offer.payloadType else {
                throw MediaSignalError(message: "\"red_payload_type\" must differ from \"payload_type\"")
            }
            return .media(offer)
        case "media_key":
            return .mediaKey(
                roomKey: try key(object, "room_key"), epoch: try integer(object, "epoch", 0...Int(Int32.max)))
        case "media_path":
            guard let path = MediaPathKind(rawValue: try string(object, "path")) else {
                throw MediaSignalError(message: "\"path\" must be \"udp\" or \"websocket\"")
            }
            var takesRED = false
            switch object["red"] {
            case nil: break
            case .bool(let value)?: takesRED = value
            default: throw MediaSignalError(message: "\"red\" must be true or false")
            }
            return .mediaPath(path, takesRED: takesRED)
        case "media_sources":
            guard case .array(let items)? = object["sources"] else {
                throw MediaSignalError(message: "\"sources\" must be an array")
            }
            var sources: [MediaSource] = []
            for item in items {
                guard case .object(let source) = item else {
                    throw MediaSignalError(message: "each source must be an object")
                }
                sources.append(
                    MediaSource(
                        peer: try string(source, "peer"), ssrc: UInt32(try integer(source, "ssrc", 1...0xFFFF_FFFF))))
            }
            return .mediaSources(sources)
        default:
            return nil
        }
    }

    static func integer(_ object: JSONObject, _ name: String, _ range: ClosedRange<Int>) throws(MediaSignalError) -> Int
    {
        guard case .integer(let value)? = object[name], let number = Int(exactly: value), range.contains(number) else {
            throw MediaSignalError(
                message: "\"\(name)\" must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    static func string(_ object: JSONObject, _ name: String) throws(MediaSignalError) -> String {
        guard case .string(let value)? = object[name] else {
            throw MediaSignalError(message: "\"\(name)\" must be a string")
        }
        return value
    }

    static func key(_ object: JSONObject, _ name: String) throws(MediaSignalError) -> [UInt8] {
        guard let bytes = Base64URL.decode(try string(object, name)), bytes.count == 30 else {
            throw MediaSignalError(message: "\"\(name)\" must be 30 bytes in base64url")
        }
        return bytes
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
