import Foundation
import RoomTesting
import Testing

@testable import RoomTransport

/// A server name with several addresses (a cluster's nodes behind one DNS name): the client tries each while
/// connects fail before reaching a server, and next time starts with the one that answered.
@Suite(.serialized) struct AddressFallbackTests {
    func address(_ port: Int) throws -> [UInt8] {
        try #require(try Socket.resolve(host: "127.0.0.1", port: port, passive: false).first)
    }

    func connect(_ url: String, _ addresses: [[UInt8]]) throws(TransportError) -> WebSocketClient {
        try WebSocketClient.connect(to: url, handler: WebSocketClient.Handler(), addresses: addresses)
    }

    @Test func aRefusedAddressIsPassedOverAndTheOneThatAnsweredIsTriedFirstNextTime() throws {
        let server = try startEchoServer()
        defer { server.shutdown() }
        let dead = try address(try freeLoopbackPort())
        let live = try address(server.port)
        let url = "ws://cluster.invalid:\(server.port)/echo"
        AddressMemory.shared.forget("cluster.invalid:\(server.port)")
        let first = try connect(url, [dead, live])
        first.close()
        #expect(AddressMemory.shared.ordered([dead, live], for: "cluster.invalid:\(server.port)") == [live, dead])
        let second = try connect(url, [dead, live])
        second.close()
    }

    @Test func whenEveryAddressRefusesTheLastOnesErrorIsThrown() throws {
        let dead = [try address(try freeLoopbackPort()), try address(try freeLoopbackPort())]
        do {
            _ = try connect("ws://cluster.invalid:1/echo", dead)
            Issue.record("connected to no server")
        } catch {
            #expect(error.place == "connect cluster.invalid:1")
            #expect(error.problem == "Connection refused")
            #expect(error.cause == .refused)
        }
    }

    @Test func aServerThatAnswersAndRefusesTheUpgradeIsNotPassedOver() throws {
        let server = try startEchoServer()
        defer { server.shutdown() }
        let other = try startEchoServer()
        defer { other.shutdown() }
        AddressMemory.shared.forget("cluster.invalid:\(server.port)")
        let addresses = [try address(server.port), try address(other.port)]
        do {
            _ = try connect("ws://cluster.invalid:\(server.port)/forbidden", addresses)
            Issue.record("the refused upgrade was passed over")
        } catch {
            #expect(error.problem.contains("403"))
            #expect(error.cause == .httpStatus(403))
        }
    }
}
