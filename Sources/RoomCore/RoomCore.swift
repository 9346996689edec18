// RoomCore
