/// Who is in the demo room besides you.
public struct DemoCast: Sendable, Equatable {
    /// A bot with a part to play: its identity (the token's `sub`), display name and starting role.
    public struct Member: Sendable, Equatable {
        public var identity: String
        public var name: String
        public var role: String
    }

    /// A listener who raises a hand a while after the room opens.
    public struct HandRaiser: Sendable, Equatable {
        public var member: Member
        /// Seconds after the room opens.
        public var raisesAfter: Double
    }

    /// Runs the room with you; says the opening and greets new speakers.
    public var moderator: Member
    /// On stage, taking turns with the conversation's lines.
    public var speakers: [Member]
    /// In the audience, each with one line for when invited.
    public var handRaisers: [HandRaiser]
    /// The rest of the audience: they listen and now and then chat.
    public var audience: [Member]

    /// The standard cast with `audienceSize` audience members.
    public static func standard(audienceSize: Int) -> DemoCast {
        DemoCast(
            moderator: Member(identity: "dara", name: "Dara", role: "moderator"),
            speakers: [
                Member(identity: "sam", name: "Sam", role: "speaker"),
                Member(identity: "imogen", name: "Imogen", role: "speaker"),
                Member(identity: "callum", name: "Callum", role: "speaker"),
            ],
            handRaisers: [
                HandRaiser(member: Member(identity: "zoe", name: "Zoë", role: "audience"), raisesAfter: 5),
                HandRaiser(member: Member(identity: "misaki", name: "美咲", role: "audience"), raisesAfter: 15),
                HandRaiser(member: Member(identity: "ravi", name: "Ravi", role: "audience"), raisesAfter: 30),
            ],
            audience: audienceMembers(count: audienceSize))
    }

    /// The person who runs the demo, as the room knows them: identity `you`, the host's role, and the display name
    /// `hostName(loginName:)` gives.
    public func host(loginName: String?) -> Member {
        Member(identity: "you", name: hostName(loginName: loginName), role: "host")
    }

    /// The display name of the person who runs the demo, its host: their login name, capitalised. "Host" when
    /// there is none, when it is `root` (a container's), or when a member of the cast has it: a listener must never
    /// read "You invited you to speak", or see two people of one name.
    func hostName(loginName: String?) -> String {
        guard let login = loginName, !login.isEmpty, login != "root" else { return "Host" }
        let name = login.prefix(1).uppercased() + login.dropFirst()
        let taken = (principals + audience).contains { $0.name.lowercased() == name.lowercased() }
        return taken || name.lowercased() == "you" ? "Host" : name
    }

    /// Everyone with a part, moderator first.
    public var principals: [Member] { [moderator] + speakers + handRaisers.map(\.member) }

    /// `count` listeners with varied names (accents, CJK, Hangul, an emoji); past the list, names repeat with
    /// initials, so every display name stays distinct.
    public static func audienceMembers(count: Int) -> [Member] {
        (0..<max(0, count)).map { index in
            let base = audienceNames[index % audienceNames.count]
            let round = index / audienceNames.count
            let name = round == 0 ? base : "\(base) \(initialsFor(round))."
            let digits = String(index + 1)
            let identity = "guest-" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
            return Member(identity: identity, name: name, role: "audience")
        }
    }

    static let audienceNames = [
        "Hana", "Björn", "Chiara", "Dmitri", "Élodie", "Farah", "健太", "Gökhan", "Ingrid", "민준",
        "Kwame", "Leilani", "Mateo", "Nnamdi", "Oksana", "陳靜", "Quynh", "Rafael", "Søren", "Tomasz",
        "Úna", "Vikram", "Ferris 🦀", "Ximena", "Yusuf", "Zainab", "Łukasz", "José", "Anaïs", "Siobhán",
        "İlker", "Þóra", "Ngozi", "Priya", "さくら", "Tariq", "Renée", "Olu", "Jun", "Mio",
    ]

    static let initials = Array("ABCDEFGHJKLMNOPRSTVWZ").map(String.init)

    /// A, B, … Z, then AA, AB, …: a different set of initials for every round through the names.
    static func initialsFor(_ round: Int) -> String {
        var number = round
        var letters = ""
        while number > 0 {
            number -= 1
            letters = initials[number % initials.count] + letters
            number /= initials.count
        }
        return letters
    }
}
