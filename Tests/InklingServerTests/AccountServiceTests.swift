import Glibc
import InklingCore
import InklingServerCore
import InklingServerProtocol
import InklingServerStore
import Synchronization
import Testing

/// A clock the test moves by hand.
final class ManualClock: WallClock {
    let now = Mutex<Int64>(1_800_000_000)
    func seconds() -> Int64 { now.withLock { $0 } }
    func advance(_ seconds: Int64) { now.withLock { $0 += seconds } }
}

/// Distinct, predictable "random" bytes.
final class CountingRandom: RandomSource {
    let counter = Mutex<UInt8>(0)
    func bytes(_ count: Int) -> [UInt8] {
        let seed = counter.withLock { value -> UInt8 in
            value &+= 1
            return value
        }
        return (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ seed }
    }
}

/// A cheap stand-in for Argon2id (the real one is exercised by the integration tests).
struct FakeHasher: PasswordHasher {
    func hash(_ password: [UInt8]) -> String? { "fake$" + SHA256.hex(password) }
    func verify(_ password: [UInt8], encoded: String) -> Bool { encoded == "fake$" + SHA256.hex(password) }
}

/// A service on a fresh SQLite file, with the clock in the test's hand.
struct Fixture {
    let clock = ManualClock()
    let service: AccountService
    let path: String

    init(_ configure: (inout ServerSettings) -> Void = { _ in }) throws {
        var settings = ServerSettings()
        configure(&settings)
        var template = Array("/tmp/inkling-server-test-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        close(fd)
        path = String(cString: template)
        let path = path
        let pool = ConnectionPool(dialect: .sqlite) { () throws(SQLError) -> any SQLConnection in
            try SQLiteConnection(path: path)
        }
        service = AccountService(
            pool: pool, settings: settings, clock: clock, random: CountingRandom(), hasher: FakeHasher())
        try service.migrate()
        try service.addUser(name: "ann", password: Array("ann-secret".utf8))
        try service.addUser(name: "bob", password: Array("bob-secret".utf8))
    }

    func signIn(
        _ user: String = "ann", _ password: String? = nil, device: String = "laptop", address: String = "127.0.0.1"
    ) throws -> SignInResult {
        try service.signIn(
            username: user, password: Array((password ?? "\(user)-secret").utf8), deviceName: device, address: address)
    }

    func token(_ user: String = "ann", device: String = "laptop") throws -> DeviceTokenAnswer {
        guard case .issued(let answer) = try signIn(user, device: device) else { throw SQLError("not issued") }
        return answer
    }

    func cleanUp() {
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
    }
}

@Suite struct TokenLifecycleTests {
    @Test func issuedTokenAuthenticatesUntilItExpires() throws {
        let fixture = try Fixture { $0.tokenLifetimeSeconds = 1000 }
        defer { fixture.cleanUp() }
        let answer = try fixture.token()
        #expect(ServerAPI.isWellFormedToken(answer.token))
        #expect(answer.expiresAt == fixture.clock.seconds() + 1000)
        #expect(try fixture.service.authenticate(token: answer.token)?.deviceID == answer.deviceID)
        fixture.clock.advance(999)
        #expect(try fixture.service.authenticate(token: answer.token) != nil)
        fixture.clock.advance(1)
        #expect(try fixture.service.authenticate(token: answer.token) == nil)
    }

    @Test func unknownAndMalformedTokensAreRefused() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let answer = try fixture.token()
        var altered = Array(answer.token)
        altered[10] = altered[10] == "A" ? "B" : "A"
        #expect(try fixture.service.authenticate(token: String(altered)) == nil)
        #expect(try fixture.service.authenticate(token: nil) == nil)
        #expect(try fixture.service.authenticate(token: "ink_' OR 1=1 --") == nil)
        #expect(try fixture.service.authenticate(token: DeviceToken.storedHash(answer.token)) == nil)
    }

    @Test func wrongPasswordAndUnknownUserGetTheSameAnswer() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        #expect(try fixture.signIn("ann", "wrong") == .badCredentials)
        #expect(try fixture.signIn("nobody", "x") == .badCredentials)
    }

    @Test func rotationKeepsTheOldTokenOnlyForTheGracePeriod() throws {
        let fixture = try Fixture { $0.graceSeconds = 600 }
        defer { fixture.cleanUp() }
        let first = try fixture.token()
        let principal = try #require(try fixture.service.authenticate(token: first.token))
        let rotated = try #require(try fixture.service.rotate(principal))
        #expect(rotated.token != first.token)
        #expect(rotated.deviceID == first.deviceID)
        #expect(rotated.oldTokenValidUntil == fixture.clock.seconds() + 600)
        let old = try #require(try fixture.service.authenticate(token: first.token))
        #expect(!old.isCurrent)
        // The old token cannot be rotated again (that would fork the device).
        #expect(try fixture.service.rotate(old) == nil)
        fixture.clock.advance(599)
        #expect(try fixture.service.authenticate(token: first.token) != nil)
        fixture.clock.advance(1)
        #expect(try fixture.service.authenticate(token: first.token) == nil)
        #expect(try fixture.service.authenticate(token: rotated.token)?.isCurrent == true)
    }

    @Test func rotationIsAdvisedOnceTheTokenIsOld() throws {
        let fixture = try Fixture { $0.rotateAfterSeconds = 100 }
        defer { fixture.cleanUp() }
        let answer = try fixture.token()
        #expect(try fixture.service.authenticate(token: answer.token)?.shouldRotate == false)
        fixture.clock.advance(100)
        #expect(try fixture.service.authenticate(token: answer.token)?.shouldRotate == true)
    }

    @Test func revokingTheDeviceKillsCurrentAndGraceTokensAtOnce() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let first = try fixture.token()
        let principal = try #require(try fixture.service.authenticate(token: first.token))
        let rotated = try #require(try fixture.service.rotate(principal))
        #expect(try fixture.service.revokeDevice(userID: principal.userID, deviceID: principal.deviceID))
        #expect(try fixture.service.authenticate(token: first.token) == nil)
        #expect(try fixture.service.authenticate(token: rotated.token) == nil)
    }

    @Test func signOutEverywhereRevokesOnlyThatUsersDevices() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let laptop = try fixture.token(device: "laptop")
        let desktop = try fixture.token(device: "desktop")
        let bobs = try fixture.token("bob")
        let principal = try #require(try fixture.service.authenticate(token: laptop.token))
        #expect(try fixture.service.revokeAll(userID: principal.userID) == 2)
        #expect(try fixture.service.authenticate(token: laptop.token) == nil)
        #expect(try fixture.service.authenticate(token: desktop.token) == nil)
        #expect(try fixture.service.authenticate(token: bobs.token) != nil)
    }

    @Test func oneUserCannotRevokeAnothersDevice() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let anns = try fixture.token()
        let bobs = try fixture.token("bob")
        let bob = try #require(try fixture.service.authenticate(token: bobs.token))
        #expect(try !fixture.service.revokeDevice(userID: bob.userID, deviceID: anns.deviceID))
        #expect(try fixture.service.authenticate(token: anns.token) != nil)
    }

    @Test func disablingAUserRevokesAndRefusesSignIn() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let answer = try fixture.token()
        try fixture.service.disableUser(name: "ann")
        #expect(try fixture.service.authenticate(token: answer.token) == nil)
        #expect(try fixture.signIn() == .badCredentials)
    }

    @Test func theDatabaseHoldsNoToken() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let answer = try fixture.token()
        let stored = try fixture.service.pool.with { (db) throws(SQLError) in
            try db.execute("SELECT hash FROM tokens", [])
        }
        #expect(stored == [[.text(DeviceToken.storedHash(answer.token))]])
    }
}

@Suite struct LimitTests {
    @Test func deviceCapCountsOnlyLiveDevices() throws {
        let fixture = try Fixture { $0.maximumDevices = 2 }
        defer { fixture.cleanUp() }
        let first = try fixture.token(device: "one")
        _ = try fixture.token(device: "two")
        #expect(try fixture.signIn(device: "three") == .tooManyDevices)
        // Another user is not affected.
        #expect(try { if case .issued = try fixture.signIn("bob") { true } else { false } }())
        let principal = try #require(try fixture.service.authenticate(token: first.token))
        _ = try fixture.service.revokeDevice(userID: principal.userID, deviceID: principal.deviceID)
        #expect(try { if case .issued = try fixture.signIn(device: "three") { true } else { false } }())
    }

    @Test func checksPerMinuteRefuseWithTheSecondsLeftAndCountNothing() throws {
        let fixture = try Fixture { $0.checksPerMinute = 3 }
        defer { fixture.cleanUp() }
        let answer = try fixture.token()
        let principal = try #require(try fixture.service.authenticate(token: answer.token))
        let second = fixture.clock.seconds() % 60
        for _ in 0..<3 {
            #expect(
                try fixture.service.admitCheck(userID: principal.userID, deviceID: principal.deviceID, characters: 10)
                    == .allowed)
        }
        #expect(
            try fixture.service.admitCheck(userID: principal.userID, deviceID: principal.deviceID, characters: 10)
                == .limited(retryAfter: 60 - second))
        fixture.clock.advance(60 - second)
        #expect(
            try fixture.service.admitCheck(userID: principal.userID, deviceID: principal.deviceID, characters: 10)
                == .allowed)
    }

    @Test func checksPerDay() throws {
        let fixture = try Fixture {
            $0.checksPerDay = 2
            $0.checksPerMinute = 100
        }
        defer { fixture.cleanUp() }
        let answer = try fixture.token()
        let principal = try #require(try fixture.service.authenticate(token: answer.token))
        let second = fixture.clock.seconds() % 86_400
        #expect(
            try fixture.service.admitCheck(userID: principal.userID, deviceID: principal.deviceID, characters: 1)
                == .allowed)
        #expect(
            try fixture.service.admitCheck(userID: principal.userID, deviceID: principal.deviceID, characters: 1)
                == .allowed)
        #expect(
            try fixture.service.admitCheck(userID: principal.userID, deviceID: principal.deviceID, characters: 1)
                == .limited(retryAfter: 86_400 - second))
        fixture.clock.advance(86_400 - second)
        #expect(
            try fixture.service.admitCheck(userID: principal.userID, deviceID: principal.deviceID, characters: 1)
                == .allowed)
    }

    @Test func charactersPerDayRefuseTheCheckThatWouldGoOver() throws {
        let fixture = try Fixture { $0.charactersPerDay = 100 }
        defer { fixture.cleanUp() }
        let answer = try fixture.token()
        let principal = try #require(try fixture.service.authenticate(token: answer.token))
        #expect(
            try fixture.service.admitCheck(userID: principal.userID, deviceID: principal.deviceID, characters: 60)
                == .allowed)
        #expect(
            try fixture.service.admitCheck(userID: principal.userID, deviceID: principal.deviceID, characters: 60)
                != .allowed)
        // The refused check was not counted: 40 more still fit.
        #expect(
            try fixture.service.admitCheck(userID: principal.userID, deviceID: principal.deviceID, characters: 40)
                == .allowed)
    }

    @Test func limitsArePerUser() throws {
        let fixture = try Fixture { $0.checksPerMinute = 1 }
        defer { fixture.cleanUp() }
        let ann = try #require(try fixture.service.authenticate(token: try fixture.token().token))
        let bob = try #require(try fixture.service.authenticate(token: try fixture.token("bob").token))
        #expect(try fixture.service.admitCheck(userID: ann.userID, deviceID: ann.deviceID, characters: 1) == .allowed)
        #expect(try fixture.service.admitCheck(userID: ann.userID, deviceID: ann.deviceID, characters: 1) != .allowed)
        #expect(try fixture.service.admitCheck(userID: bob.userID, deviceID: bob.deviceID, characters: 1) == .allowed)
    }

    @Test func failedSignInsAreThrottledPerUserEvenWithTheRightPassword() throws {
        let fixture = try Fixture {
            $0.loginFailuresPerUser = 3
            $0.loginWindowSeconds = 900
        }
        defer { fixture.cleanUp() }
        for attempt in 0..<3 { #expect(try fixture.signIn("ann", "guess\(attempt)") == .badCredentials) }
        guard case .throttled(let retryAfter) = try fixture.signIn() else {
            Issue.record("not throttled")
            return
        }
        #expect(retryAfter > 0 && retryAfter <= 900)
        // Bob is not locked out by attempts on Ann.
        #expect(try { if case .issued = try fixture.signIn("bob") { true } else { false } }())
        fixture.clock.advance(retryAfter)
        #expect(try { if case .issued = try fixture.signIn() { true } else { false } }())
    }

    @Test func failedSignInsAreThrottledPerAddress() throws {
        let fixture = try Fixture {
            $0.loginFailuresPerAddress = 3
            $0.loginFailuresPerUser = 100
        }
        defer { fixture.cleanUp() }
        for index in 0..<3 { #expect(try fixture.signIn("user\(index)", "x", address: "192.0.2.1") == .badCredentials) }
        if case .throttled = try fixture.signIn(address: "192.0.2.1") {} else { Issue.record("address not throttled") }
        #expect(try { if case .issued = try fixture.signIn(address: "192.0.2.2") { true } else { false } }())
    }
}

@Suite struct ServerCoreSupportTests {
    @Test func sha256KnownAnswers() {
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func base64URLMatchesRFC4648() {
        #expect(DeviceToken.base64URL(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(DeviceToken.base64URL(Array("fooba".utf8)) == "Zm9vYmE")
        #expect(DeviceToken.base64URL([0xFB, 0xFF]) == "-_8")
    }

    @Test func argon2idHashesVerifyAndDiffer() {
        let hasher = Argon2idHasher(iterations: 1, memoryKiB: 64)
        let first = hasher.hash(Array("pw".utf8))
        #expect(first?.hasPrefix("$argon2id$") == true)
        #expect(first != hasher.hash(Array("pw".utf8)))
        #expect(hasher.verify(Array("pw".utf8), encoded: first ?? ""))
        #expect(!hasher.verify(Array("pW".utf8), encoded: first ?? ""))
    }
}

@Suite struct HousekeepingTests {
    func count(_ fixture: Fixture, _ table: String) throws -> Int64 {
        try fixture.service.pool.with { (db) throws(SQLError) in
            try db.execute("SELECT COUNT(*) FROM \(table)", []).first?.first?.int ?? -1
        }
    }

    @Test func purgeDeletesOnlyRowsNoRuleNeedsAnyMore() throws {
        let fixture = try Fixture {
            $0.tokenLifetimeSeconds = 5 * 86_400
            $0.graceSeconds = 600
            $0.retentionSeconds = 7 * 86_400
        }
        defer { fixture.cleanUp() }
        let service = fixture.service
        let expiring = try fixture.token(device: "old-laptop")
        let first = try fixture.token(device: "desktop")
        let desktop = try #require(try service.authenticate(token: first.token))
        #expect(try service.admitCheck(userID: desktop.userID, deviceID: desktop.deviceID, characters: 10) == .allowed)
        #expect(try fixture.signIn("ann", "wrong") == .badCredentials)
        let bobs = try fixture.token("bob")
        let bob = try #require(try service.authenticate(token: bobs.token))
        #expect(try service.revokeDevice(userID: bob.userID, deviceID: bob.deviceID))
        #expect(try service.purge() == PurgeReport())

        fixture.clock.advance(4 * 86_400)
        let current = try #require(try service.rotate(desktop))
        fixture.clock.advance(86_400)
        // Day 5: the old laptop's token expired, the desktop's first token is past its grace,
        // the first day's usage (minute and day) and the failed sign-in (user and address) are old.
        #expect(try service.purge() == PurgeReport(tokens: 2, devices: 0, usage: 2, loginFailures: 2))
        #expect(try count(fixture, "tokens") == 1)
        #expect(try count(fixture, "usage") == 0)
        #expect(try count(fixture, "login_failures") == 0)
        #expect(try service.authenticate(token: current.token) != nil)
        #expect(try service.authenticate(token: expiring.token) == nil)
        // Devices stay listed for the retention period.
        #expect(try service.devices(ofUser: "ann").map(\.name) == ["old-laptop", "desktop"])
        #expect(try service.devices(ofUser: "bob").count == 1)

        fixture.clock.advance(3 * 86_400)
        // Day 8: the revoked device and the expired one are past retention; the desktop is live.
        #expect(try service.purge() == PurgeReport(devices: 2))
        #expect(try service.devices(ofUser: "ann").map(\.name) == ["desktop"])
        #expect(try service.devices(ofUser: "bob").isEmpty)
        #expect(try service.authenticate(token: current.token)?.deviceID == desktop.deviceID)
        #expect(try service.purge() == PurgeReport())
    }
}
