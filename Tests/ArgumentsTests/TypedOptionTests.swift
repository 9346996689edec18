import Arguments
import Testing

private let peers = TypedOption.integer("peers", placeholder: "N", in: 1...10_000, default: 100, help: "Most peers.")
private let ttl = TypedOption.duration("ttl", placeholder: "DURATION", default: .seconds(7 * 86_400), help: "Life.")
private let listen = TypedOption.endpoint(
    "listen", placeholder: "HOST:PORT", default: Endpoint(host: "::1", port: 7480), help: "Address.")
private let role = TypedOption.string("role", placeholder: "ROLE", default: "audience", help: "Role.")
private let room = TypedOption.string("room", placeholder: "ROOM", help: "Room.")
private let limit = TypedOption.integer("limit", placeholder: "N", in: 1...9, help: "Limit.")
private let mode = TypedOption.choice("mode", placeholder: "MODE", ["fast", "slow"], default: "slow", help: "Mode.")
private let verbose = TypedOption.flag("verbose", short: "v", help: "Log more.")

private let typed = Command(
    name: "typed", abstract: "Typed options.",
    options: [
        peers.option, ttl.option, listen.option, role.option, room.option, limit.option, mode.option, verbose.option,
    ])

/// The default a typed option declares is written into the declaration from the value, so help shows it.
@Test func theDefaultIsWrittenFromTheTypedValue() {
    #expect(typed.declarationProblems == [])
    #expect(peers.option.defaultValue == "100")
    #expect(ttl.option.defaultValue == "7d")
    #expect(listen.option.defaultValue == "[::1]:7480")
    #expect(role.option.defaultValue == "audience")
    #expect(mode.option.defaultValue == "slow")
    #expect(room.option.defaultValue == nil)
    #expect(limit.option.defaultValue == nil)
    #expect(peers.option.kind == .value(placeholder: "N", type: .integer(1...10_000)))
}

@Test func leftOutOptionsReadAsTheirDefaults() throws {
    let parsed = try typed.parse([])
    #expect(parsed[peers] == 100)
    #expect(parsed[ttl] == .seconds(7 * 86_400))
    #expect(parsed[listen] == Endpoint(host: "::1", port: 7480))
    #expect(parsed[role] == "audience")
    #expect(parsed[mode] == "slow")
    #expect(parsed[room] == nil)
    #expect(parsed[limit] == nil)
    #expect(parsed[verbose] == false)
    #expect(parsed.ifGiven(peers) == nil)
    #expect(!parsed.isGiven(peers))
}

@Test func givenOptionsReadAsTyped() throws {
    let parsed = try typed.parse([
        "--peers", "7", "--ttl", "1h30m", "--listen", "127.0.0.1:1", "--role", "host", "--room", "jazz",
        "--limit", "3", "--mode", "fast", "-v",
    ])
    #expect(parsed[peers] == 7)
    #expect(parsed[ttl] == .seconds(5400))
    #expect(parsed[listen] == Endpoint(host: "127.0.0.1", port: 1))
    #expect(parsed[role] == "host")
    #expect(parsed[room] == "jazz")
    #expect(parsed[limit] == 3)
    #expect(parsed[mode] == "fast")
    #expect(parsed[verbose])
    #expect(parsed.ifGiven(peers) == 7)
}

@Test func durationTextIsTheLargestExactUnits() {
    #expect(durationText(.seconds(7 * 86_400)) == "7d")
    #expect(durationText(.seconds(3600)) == "1h")
    #expect(durationText(.seconds(5400)) == "1h30m")
    #expect(durationText(.milliseconds(1500)) == "1s500ms")
    #expect(durationText(.milliseconds(500)) == "500ms")
    #expect(durationText(.seconds(90_061)) == "1d1h1m1s")
    #expect(durationText(.zero) == "0s")
    for duration: Duration in [.seconds(1), .seconds(61), .milliseconds(60_001), .seconds(30 * 86_400)] {
        #expect(ValueType.duration.parse(durationText(duration)) == .duration(duration))
    }
}
