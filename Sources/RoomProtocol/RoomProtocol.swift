// RoomProtocol
