import ClubroomResources
import RoomCore
import RoomProtocol

@testable import RoomServer

let defaultRoles = try! RoleTable.load(contentsOf: ClubroomResources.rolesURL)

func events(_ outcome: Outcome) -> [WireEvent] { outcome.deliveries.map(\.message.event) }

func refusal(_ outcome: Outcome) -> (code: ErrorCode, message: String)? {
    guard case .error(let code, let message, _)? = outcome.error?.event else { return nil }
    return (code, message)
}
