internal import CHiredis
import Glibc
import Platform
import Synchronization

/// How a connection waits: for the connect, for each reply, and between failed reconnects.
public struct RedisOptions: Sendable, Equatable {
    /// Longest wait for the TCP connect.
    public var connectTimeoutMilliseconds: Int
    /// Longest wait for a reply (and for sending); past it the connection is dropped.
    public var commandTimeoutMilliseconds: Int
    /// The local address connections are made from (a node's own address, so that network rules can tell
    /// nodes apart); `nil` lets the kernel choose.
    public var sourceAddress: String?
    /// The first wait after a failed connect; it doubles per failure up to `maximumBackoffMilliseconds`.
    public var minimumBackoffMilliseconds: Int
    public var maximumBackoffMilliseconds: Int

    public init(
        connectTimeoutMilliseconds: Int = 1000, commandTimeoutMilliseconds: Int = 2000, sourceAddress: String? = nil,
        minimumBackoffMilliseconds: Int = 50, maximumBackoffMilliseconds: Int = 1000
    ) {
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.commandTimeoutMilliseconds = commandTimeoutMilliseconds
        self.sourceAddress = sourceAddress
        self.minimumBackoffMilliseconds = minimumBackoffMilliseconds
        self.maximumBackoffMilliseconds = maximumBackoffMilliseconds
    }
}

/// The socket of a connection, readable from any thread, so another thread can interrupt a blocked call.
final class SocketSlot: Sendable {
    private let descriptor = Atomic<Int32>(-1)
    private let connectsCount = Atomic<Int>(0)

    func set(_ value: Int32) {
        if value >= 0 { connectsCount.add(1, ordering: .relaxed) }
        descriptor.store(value, ordering: .releasing)
    }

    var connects: Int { connectsCount.load(ordering: .relaxed) }

    /// Shuts the socket down: a call blocked on it returns at once with an error.
    func interrupt() {
        let fd = descriptor.load(ordering: .acquiring)
        if fd >= 0 { _ = shutdown(fd, Int32(SHUT_RDWR)) }
    }
}

/// One blocking connection to Redis through hiredis, for one thread at a time.
///
/// It connects on first use and again after any failure (a broken connection is never reused: after a timeout
/// a late reply would be taken for the next command's). Commands are never retried here, since whether a
/// command that lost its connection ran is unknown; callers retry what is idempotent. After a failed connect,
/// calls fail fast with `backingOff` until a backoff (50 ms doubling to 1 s) has passed.
public final class RedisConnection {
    public let endpoint: RedisEndpoint
    public let options: RedisOptions
    private var context: UnsafeMutablePointer<redisContext>?
    private var backoffMilliseconds = 0
    private var retryAt: Int64 = 0
    let socketSlot = SocketSlot()
    /// How many times a connection was made (the first connect and every reconnect).
    public var connects: Int { socketSlot.connects }

    public init(endpoint: RedisEndpoint, options: RedisOptions = RedisOptions()) {
        self.endpoint = endpoint
        self.options = options
    }

    deinit {
        close()
    }

    /// Whether a connection is open now (it may still turn out broken on the next command).
    public var isConnected: Bool { context != nil }

    /// Connects now unless connected, ignoring any backoff: for a start-up check that names the address.
    public func connect() throws(RedisError) {
        guard context == nil else { return }
        retryAt = 0
        _ = try connected()
    }

    /// Closes the connection; the next command connects again.
    public func close() {
        guard let context else { return }
        socketSlot.set(-1)
        redisFree(context)
        self.context = nil
    }

    /// Sends one command and reads its reply. An error reply is thrown as `RedisError.server`.
    public func command(_ command: RedisCommand) throws(RedisError) -> RedisReply {
        try pipeline([command])[0].checked()
    }

    /// Sends one command made of text arguments.
    @discardableResult
    public func command(_ arguments: String...) throws(RedisError) -> RedisReply {
        try command(RedisCommand(arguments))
    }

    /// Sends the commands in one write and reads their replies in order. Error replies are returned in place
    /// (one command's refusal does not hide the others' answers); failures of the connection are thrown.
    public func pipeline(_ commands: [RedisCommand]) throws(RedisError) -> [RedisReply] {
        guard !commands.isEmpty else { return [] }
        let context = try connected()
        for command in commands {
            guard Self.append(command, to: context) == REDIS_OK else {
                let error = failure(of: context, code: errno)
                close()
                throw error
            }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands {
            var reply: UnsafeMutablePointer<redisReply>?
            errno = 0
            let status = clubroom_redis_next_reply(context, &reply)
            let code = errno
            guard status == REDIS_OK, let reply else {
                let error = failure(of: context, code: code)
                close()
                throw error
            }
            replies.append(Self.decode(reply))
            freeReplyObject(reply)
        }
        return replies
    }

    // MARK: Connecting

    private func connected() throws(RedisError) -> UnsafeMutablePointer<redisContext> {
        if let context { return context }
        let now = Self.milliseconds()
        if now < retryAt {
            throw .backingOff(endpoint: endpoint.description, retryInMilliseconds: Int(retryAt - now))
        }
        do throws(RedisError) {
            let descriptor = try openSocket()
            guard let created = redisConnectFd(descriptor) else {
                Glibc.close(descriptor)
                throw RedisError.unreachable(endpoint: endpoint.description, reason: "hiredis could not allocate")
            }
            context = created
            socketSlot.set(descriptor)
            _ = clubroom_redis_set_timeout(created, options.commandTimeoutMilliseconds)
            _ = redisEnableKeepAlive(created)
            try logIn()
            if endpoint.database != 0 {
                _ = try pipeline([RedisCommand("SELECT", String(endpoint.database))])[0].checked()
            }
            backoffMilliseconds = 0
            retryAt = 0
            return created
        } catch {
            close()
            backoffMilliseconds =
                backoffMilliseconds == 0
                ? options.minimumBackoffMilliseconds : min(backoffMilliseconds * 2, options.maximumBackoffMilliseconds)
            retryAt = Self.milliseconds() + Int64(backoffMilliseconds)
            throw error
        }
    }

    /// Sends `AUTH` when the endpoint has a password; without one, checks that Redis does not want one, so that a
    /// missing password is said once, at the connect, rather than as every command's refusal.
    private func logIn() throws(RedisError) {
        let command: RedisCommand
        if let password = endpoint.password {
            command = endpoint.user.map { RedisCommand("AUTH", $0, password) } ?? RedisCommand("AUTH", password)
        } else {
            command = RedisCommand("PING")
        }
        let reply = try pipeline([command])[0]
        guard case .error(let message) = reply else { return }
        if endpoint.password == nil, message.hasPrefix("NOAUTH") {
            throw .refusedLogin(endpoint: endpoint.description, reason: "it wants a password (\(message))")
        }
        throw .refusedLogin(endpoint: endpoint.description, reason: message)
    }

    /// A connected, blocking TCP socket, made by us so that the connect has a timeout and a source address.
    private func openSocket() throws(RedisError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &found)
        guard status == 0, let found else {
            throw .unreachable(endpoint: endpoint.description, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(found) }
        var reason = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = found
        while let info = candidate {
            candidate = info.pointee.ai_next
            let descriptor = socket(
                info.pointee.ai_family,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else {
                reason = String(cString: strerror(errno))
                continue
            }
            if let source = options.sourceAddress, let problem = bind(descriptor, to: source, family: info) {
                Glibc.close(descriptor)
                throw .unreachable(endpoint: endpoint.description, reason: problem)
            }
            if let problem = connect(descriptor, to: info) {
                reason = problem
                Glibc.close(descriptor)
                continue
            }
            let flags = fcntl(descriptor, F_GETFL)
            _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK)
            var one: Int32 = 1
            _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            return descriptor
        }
        throw .unreachable(endpoint: endpoint.description, reason: reason)
    }

    /// Binds to the source address; the problem's text, or `nil`.
    private func bind(_ descriptor: Int32, to source: String, family info: UnsafeMutablePointer<addrinfo>) -> String? {
        var hints = addrinfo()
        hints.ai_family = info.pointee.ai_family
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICHOST
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(source, "0", &hints, &found) == 0, let found else {
            return "the source address \(source) is not an address of this family"
        }
        defer { freeaddrinfo(found) }
        guard Glibc.bind(descriptor, found.pointee.ai_addr, found.pointee.ai_addrlen) == 0 else {
            return "binding to \(source): \(String(cString: strerror(errno)))"
        }
        return nil
    }

    /// A non-blocking connect waited on with poll; the problem's text, or `nil`.
    private func connect(_ descriptor: Int32, to info: UnsafeMutablePointer<addrinfo>) -> String? {
        if Glibc.connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return nil }
        guard errno == EINPROGRESS else { return String(cString: strerror(errno)) }
        var descriptorPoll = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        let ready = poll(&descriptorPoll, 1, Int32(clamping: options.connectTimeoutMilliseconds))
        guard ready > 0 else {
            return ready == 0
                ? "no answer to the connect within \(options.connectTimeoutMilliseconds) ms"
                : String(cString: strerror(errno))
        }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
        return code == 0 ? nil : String(cString: strerror(code))
    }

    // MARK: Replies and failures

    private static func append(_ command: RedisCommand, to context: UnsafeMutablePointer<redisContext>) -> Int32 {
        var joined: [UInt8] = []
        joined.reserveCapacity(command.arguments.reduce(0) { $0 + $1.count } + 1)
        var offsets: [Int] = []
        for argument in command.arguments {
            offsets.append(joined.count)
            joined.append(contentsOf: argument)
        }
        // A zero-length buffer may have no storage; hiredis wants a pointer for every argument.
        joined.append(0)
        let lengths = command.arguments.map(\.count)
        return joined.withUnsafeBufferPointer { bytes in
            let base = UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self)
            var pointers: [UnsafePointer<CChar>?] = offsets.map { base + $0 }
            return lengths.withUnsafeBufferPointer { sizes in
                clubroom_redis_append(context, Int32(pointers.count), &pointers, sizes.baseAddress)
            }
        }
    }

    private func failure(of context: UnsafeMutablePointer<redisContext>, code: Int32) -> RedisError {
        let text = String(cString: clubroom_redis_error_text(context))
        switch context.pointee.err {
        case REDIS_ERR_IO where code == EAGAIN || code == EWOULDBLOCK:
            return .timedOut(endpoint: endpoint.description, milliseconds: options.commandTimeoutMilliseconds)
        case REDIS_ERR_EOF:
            return .connectionLost(endpoint: endpoint.description, reason: "the server closed the connection")
        case REDIS_ERR_PROTOCOL:
            return .protocolViolation(text)
        default:
            return .connectionLost(endpoint: endpoint.description, reason: text.isEmpty ? "unknown" : text)
        }
    }

    static func decode(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STATUS: return .status(text(value))
        case REDIS_REPLY_ERROR: return .error(text(value))
        case REDIS_REPLY_INTEGER: return .integer(value.integer)
        case REDIS_REPLY_NIL: return .null
        case REDIS_REPLY_STRING: return .bulk(bytes(value))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(value.elements)
            for index in 0..<value.elements {
                if let element = clubroom_redis_element(reply, index) { elements.append(decode(element)) }
            }
            return .array(elements)
        default: return .error("unknown reply type \(value.type)")
        }
    }

    private static func bytes(_ reply: redisReply) -> [UInt8] {
        guard let pointer = reply.str, reply.len > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: reply.len))
    }

    private static func text(_ reply: redisReply) -> String { String(decoding: bytes(reply), as: UTF8.self) }

    static func milliseconds() -> Int64 {
        MonotonicClock.milliseconds()
    }
}
