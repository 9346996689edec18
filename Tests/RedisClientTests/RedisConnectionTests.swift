import Foundation
import RedisClient
import RoomTesting
import Testing

@Suite(.ownThread) struct RedisEndpointTests {
    @Test func urlsParseWithTheirDefaults() throws {
        #expect(try RedisEndpoint(url: "redis://127.0.0.1:6390") == RedisEndpoint(host: "127.0.0.1", port: 6390))
        #expect(try RedisEndpoint(url: "redis://cache") == RedisEndpoint(host: "cache", port: 6379))
        #expect(try RedisEndpoint(url: "redis://[::1]:7000/2") == RedisEndpoint(host: "::1", port: 7000, database: 2))
        #expect(try RedisEndpoint(url: "redis://h:1/").description == "h:1")
        #expect(try RedisEndpoint(url: "redis://[::1]:7000/2").description == "[::1]:7000/2")
    }

    @Test func aLoginInTheURLIsReadButNeverShown() throws {
        let plain = try RedisEndpoint(url: "redis://:s3cret@cache:6390/2")
        #expect(plain == RedisEndpoint(host: "cache", port: 6390, database: 2, password: "s3cret"))
        #expect(plain.description == "cache:6390/2")
        let escaped = try RedisEndpoint(url: "redis://clubroom:p%40ss%3Aw%2Frd@[::1]:7000")
        #expect(escaped == RedisEndpoint(host: "::1", port: 7000, user: "clubroom", password: "p@ss:w/rd"))
        #expect(escaped.description == "[::1]:7000")
        #expect(RedisEndpoint.redacted("redis://clubroom:p%40ss@h:1/2") == "redis://clubroom:***@h:1/2")
        #expect(RedisEndpoint.redacted("redis://:pw@h") == "redis://:***@h")
        #expect(RedisEndpoint.redacted("redis://h:1") == "redis://h:1")
    }

    @Test func badURLsAreRefusedWithTheirReason() {
        #expect(throws: RedisEndpointError.notRedisURL("http://x:1")) { try RedisEndpoint(url: "http://x:1") }
        #expect(throws: RedisEndpointError.badPort("99999")) { try RedisEndpoint(url: "redis://x:99999") }
        #expect(throws: RedisEndpointError.badPort("")) { try RedisEndpoint(url: "redis://x:") }
        #expect(throws: RedisEndpointError.badHost("")) { try RedisEndpoint(url: "redis://:6379") }
        #expect(throws: RedisEndpointError.badDatabase("x")) { try RedisEndpoint(url: "redis://x:1/x") }
        #expect(throws: RedisEndpointError.passwordMissing) { try RedisEndpoint(url: "redis://u@x:1") }
        #expect(throws: RedisEndpointError.passwordMissing) { try RedisEndpoint(url: "redis://u:@x:1") }
        #expect(throws: RedisEndpointError.badCredentials) { try RedisEndpoint(url: "redis://u:p%4@x:1") }
        #expect(RedisEndpointError.badPort("0").description == "'0' is not a port (1-65535)")
    }
}

/// A connection with short timeouts, so the fault tests take a fraction of a second each.
func quickConnection(_ server: RedisServerProcess, source: String? = nil) throws -> RedisConnection {
    RedisConnection(
        endpoint: try RedisEndpoint(url: server.url),
        options: RedisOptions(
            connectTimeoutMilliseconds: 300, commandTimeoutMilliseconds: 300, sourceAddress: source,
            minimumBackoffMilliseconds: 50, maximumBackoffMilliseconds: 200))
}

@Suite(.ownThread, .serialized) struct RedisConnectionTests {
    @Test func repliesDecodeIntoEveryShape() throws {
        let server = try RedisServerProcess()
        let redis = try quickConnection(server)
        let binary: [UInt8] = [0, 1, 0xFF, 0x0D, 0x0A, 0]
        var set = RedisCommand("SET", "k")
        set.append(bytes: binary)
        #expect(try redis.command(set) == .status("OK"))
        #expect(try redis.command("GET", "k") == .bulk(binary))
        #expect(try redis.command("GET", "missing") == .null)
        #expect(try redis.command("INCRBY", "n", "41") == .integer(41))
        #expect(try redis.command("RPUSH", "l", "a", "", "c") == .integer(3))
        #expect(
            try redis.command("LRANGE", "l", "0", "-1")
                == .array([.bulk(Array("a".utf8)), .bulk([]), .bulk(Array("c".utf8))]))
        #expect(throws: RedisError.server("ERR unknown command 'NOPE', with args beginning with: 'x' ")) {
            try redis.command("NOPE", "x")
        }
        #expect(throws: RedisError.unexpectedReply(expected: "a count", got: "\"a\"")) {
            try redis.command("LINDEX", "l", "0").requireInteger("a count")
        }
        #expect(redis.connects == 1)
    }

    @Test func aPipelineAnswersInOrderWithErrorsInPlace() throws {
        let server = try RedisServerProcess()
        let redis = try quickConnection(server)
        var commands = (0..<1000).map { _ in RedisCommand("INCR", "counter") }
        commands.insert(RedisCommand("HGET", "counter", "x"), at: 500)
        let replies = try redis.pipeline(commands)
        #expect(replies.count == 1001)
        #expect(replies[0] == .integer(1))
        #expect(replies[499] == .integer(500))
        #expect(replies[500] == .error("WRONGTYPE Operation against a key holding the wrong kind of value"))
        #expect(replies[501] == .integer(501))
        #expect(replies[1000] == .integer(1000))
    }

    @Test func nothingListeningIsUnreachableThenBacksOff() throws {
        let port = try freeLoopbackPort()
        let redis = RedisConnection(
            endpoint: RedisEndpoint(host: "127.0.0.1", port: port),
            options: RedisOptions(minimumBackoffMilliseconds: 5_000, maximumBackoffMilliseconds: 5_000))
        #expect(throws: RedisError.unreachable(endpoint: "127.0.0.1:\(port)", reason: "Connection refused")) {
            try redis.command("PING")
        }
        do {
            try redis.command("PING")
            Issue.record("a second attempt within the backoff connected")
        } catch {
            guard case .backingOff(let endpoint, let retry) = error else {
                Issue.record("expected backingOff, got \(error)")
                return
            }
            #expect(endpoint == "127.0.0.1:\(port)")
            #expect(retry > 0 && retry <= 5_000)
            #expect(error.isUnavailable)
        }
        #expect(!redis.isConnected)
    }

    @Test func aPausedServerTimesOutAndTheConnectionRecoversAfterIt() throws {
        let server = try RedisServerProcess()
        let redis = try quickConnection(server)
        try redis.command("SET", "k", "v")
        server.pause()
        #expect(throws: RedisError.timedOut(endpoint: "127.0.0.1:\(server.port)", milliseconds: 300)) {
            try redis.command("GET", "k")
        }
        #expect(!redis.isConnected)
        server.resume()
        // The late reply of the timed-out GET went with the old connection; this one gets its own answer.
        #expect(try redis.command("ECHO", "fresh") == .bulk(Array("fresh".utf8)))
        #expect(redis.connects == 2)
    }

    @Test func aKilledServerLosesTheConnectionAndARestartKeepsItsAppendOnlyData() throws {
        let server = try RedisServerProcess(appendOnly: true)
        let redis = try quickConnection(server)
        try redis.command("SET", "kept", "yes")
        server.kill()
        do {
            try redis.command("GET", "kept")
            Issue.record("a command reached a killed server")
        } catch {
            guard case .connectionLost = error else {
                Issue.record("expected connectionLost, got \(error)")
                return
            }
        }
        #expect(throws: RedisError.unreachable(endpoint: "127.0.0.1:\(server.port)", reason: "Connection refused")) {
            try redis.command("GET", "kept")
        }
        try server.start()
        #expect(waitUntil(limit: 2) { (try? redis.command("GET", "kept")) == .bulk(Array("yes".utf8)) })
        #expect(redis.connects == 2)
    }

    @Test func aServerRestartedEmptyHasForgottenEverything() throws {
        let server = try RedisServerProcess(appendOnly: true)
        let redis = try quickConnection(server)
        try redis.command("SET", "gone", "soon")
        server.kill()
        try server.start(keepingData: false)
        #expect(waitUntil(limit: 2) { (try? redis.command("GET", "gone")) == .null })
    }

    @Test func connectionsComeFromTheSourceAddressAsked() throws {
        let server = try RedisServerProcess()
        let redis = try quickConnection(server, source: "127.0.0.3")
        let info = try redis.command("CLIENT", "INFO").requireString("client info")
        #expect(info.contains(" laddr=127.0.0.1:\(server.port) "))
        #expect(info.hasPrefix("id=") && info.contains(" addr=127.0.0.3:"))
        let bad = RedisConnection(
            endpoint: try RedisEndpoint(url: server.url), options: RedisOptions(sourceAddress: "not-an-address"))
        #expect(
            throws: RedisError.unreachable(
                endpoint: "127.0.0.1:\(server.port)",
                reason: "the source address not-an-address is not an address of this family")
        ) { try bad.command("PING") }
    }

    @Test func aDatabaseInTheURLIsSelected() throws {
        let server = try RedisServerProcess()
        let zero = try quickConnection(server)
        let three = RedisConnection(endpoint: try RedisEndpoint(url: server.url + "/3"))
        try three.command("SET", "where", "three")
        #expect(try zero.command("GET", "where") == .null)
        #expect(try zero.command("SELECT", "3") == .status("OK"))
        #expect(try zero.command("GET", "where") == .bulk(Array("three".utf8)))
    }
}

@Suite(.ownThread, .serialized) struct RedisLoginTests {
    func connection(_ server: RedisServerProcess, user: String? = nil, password: String?) -> RedisConnection {
        RedisConnection(
            endpoint: RedisEndpoint(host: server.host, port: server.port, user: user, password: password),
            options: RedisOptions(connectTimeoutMilliseconds: 300, commandTimeoutMilliseconds: 300))
    }

    @Test func theRightPasswordLogsInAndAWrongOrMissingOneIsRefusedAtTheConnect() throws {
        let server = try RedisServerProcess(appendOnly: false, password: "s3cret")
        #expect(try connection(server, password: "s3cret").command("PING").string == "PONG")

        let wrong = connection(server, password: "guess")
        do {
            _ = try wrong.command("PING")
            Issue.record("a wrong password logged in")
        } catch {
            guard case .refusedLogin(let endpoint, let reason) = error else {
                Issue.record("expected a refused login, got \(error)")
                return
            }
            #expect(endpoint == "127.0.0.1:\(server.port)")
            #expect(reason.hasPrefix("WRONGPASS"))
            #expect(error.isUnavailable)
            #expect(!error.description.contains("guess"))
        }
        #expect(!wrong.isConnected)

        do {
            _ = try connection(server, password: nil).command("PING")
            Issue.record("no password logged in")
        } catch {
            #expect(
                error
                    == .refusedLogin(
                        endpoint: "127.0.0.1:\(server.port)",
                        reason: "it wants a password (NOAUTH Authentication required.)"))
        }
    }

    @Test func anACLUserLogsInWithItsOwnPassword() throws {
        let server = try RedisServerProcess(appendOnly: false, password: "admin")
        let admin = connection(server, password: "admin")
        _ = try admin.command("ACL", "SETUSER", "clubroom", "on", ">node-pass", "~cr:*", "+@all")
        let node = connection(server, user: "clubroom", password: "node-pass")
        #expect(try node.command("SET", "cr:x", "1").string == "OK")
        #expect(throws: RedisError.self) { try node.command("SET", "elsewhere", "1") }
        #expect(throws: RedisError.self) {
            try connection(server, user: "clubroom", password: "admin").command("PING")
        }
    }
}
