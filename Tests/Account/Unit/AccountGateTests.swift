import Glibc
import InklingCore
import InklingServerProtocol
import Testing

@testable import InklingAccount

/// A device credential obtained at `obtained` that expires `lifetime` seconds later.
private func credential(token: String = "ink_first", obtained: Int64 = 1_000_000, lifetime: Int64 = 86_400)
    -> DeviceCredential
{
    DeviceCredential(
        server: "https://inkling.example", username: "ada", deviceID: 7, deviceName: "laptop", token: token,
        expiresAt: obtained + lifetime, obtainedAt: obtained)
}

private func rotateAnswer(token: String, now: Int64, lifetime: Int64 = 86_400) -> DeviceRotateAnswer {
    DeviceRotateAnswer(token: token, deviceID: 7, expiresAt: now + lifetime, oldTokenValidUntil: now + 600)
}

@Suite struct TokenRotationPolicyTests {
    let policy = TokenRotationPolicy()

    @Test func aYoungTokenIsNotRotated() {
        let record = credential()
        #expect(!policy.isDue(record, now: record.obtainedAt, serverAsked: false, lastFailure: nil))
        #expect(!policy.isDue(record, now: record.obtainedAt + 86_400 / 2, serverAsked: false, lastFailure: nil))
    }

    @Test func rotatedOnceThreeQuartersOfTheLifetimeHavePassed() {
        let record = credential()
        #expect(!policy.isDue(record, now: record.obtainedAt + 64_799, serverAsked: false, lastFailure: nil))
        #expect(policy.isDue(record, now: record.obtainedAt + 64_800, serverAsked: false, lastFailure: nil))
        #expect(policy.isDue(record, now: record.expiresAt + 10, serverAsked: false, lastFailure: nil))
    }

    @Test func rotatedAtOnceWhenTheServerAsks() {
        let record = credential()
        #expect(policy.isDue(record, now: record.obtainedAt + 1, serverAsked: true, lastFailure: nil))
    }

    @Test func aFailedRotationWaitsBeforeTheNextTry() {
        let record = credential()
        let failed = record.obtainedAt + 70_000
        #expect(!policy.isDue(record, now: failed + 59, serverAsked: true, lastFailure: failed))
        #expect(policy.isDue(record, now: failed + 60, serverAsked: true, lastFailure: failed))
    }

    @Test func aClockSetBackStillRotatesBeforeExpiry() {
        // obtainedAt lies in the future (the clock went back a day): the expiry still counts.
        let record = credential(obtained: 2_000_000, lifetime: 3600)
        #expect(!policy.isDue(record, now: 1_000_000, serverAsked: false, lastFailure: nil))
        #expect(policy.isDue(record, now: record.expiresAt - 60, serverAsked: false, lastFailure: nil))
    }
}

@Suite struct AccountGateTests {
    @Test func checksGoOutWhileTheTokenIsFresh() {
        let gate = AccountGate(credential: credential())
        #expect(gate.nextStep(now: 1_000_010) == .check)
    }

    @Test func theRotateHeaderMakesTheNextCheckRotateFirst() {
        var gate = AccountGate(credential: credential())
        #expect(gate.checkAnswered(status: 200, asksRotation: true) == nil)
        #expect(gate.nextStep(now: 1_000_010) == .rotate)
        let stored = gate.rotated(rotateAnswer(token: "ink_second", now: 1_000_020), now: 1_000_020)
        #expect(stored.token == "ink_second")
        #expect(stored.obtainedAt == 1_000_020)
        #expect(gate.credential == stored)
        #expect(gate.nextStep(now: 1_000_030) == .check)
    }

    @Test func theHeaderOnAnErrorAnswerIsIgnored() {
        var gate = AccountGate(credential: credential())
        _ = gate.checkAnswered(status: 502, asksRotation: true)
        #expect(gate.nextStep(now: 1_000_010) == .check)
    }

    @Test func rotationKeepsWorkingPastManyLifetimes() {
        // An injected clock running for ten lifetimes: every rotation renews the token before it expires.
        var gate = AccountGate(credential: credential(lifetime: 3600))
        var now: Int64 = 1_000_000
        var rotations = 0
        while now < 1_000_000 + 36_000 {
            if gate.nextStep(now: now) == .rotate {
                _ = gate.rotated(rotateAnswer(token: "ink_\(rotations)", now: now, lifetime: 3600), now: now)
                rotations += 1
            }
            #expect(gate.credential.expiresAt > now)
            now += 60
        }
        #expect(rotations >= 10 && rotations <= 14)
    }

    @Test func a401StopsTheChecksAndIsReportedOnce() {
        var gate = AccountGate(credential: credential())
        #expect(gate.checkAnswered(status: 401, asksRotation: false) == .signInRequired)
        #expect(gate.signInRequired)
        #expect(gate.nextStep(now: 1_000_010) == .refuse)
        // Further refusals (a late answer, a rotation) are not reported again.
        #expect(gate.checkAnswered(status: 401, asksRotation: false) == nil)
        #expect(gate.rotationFailed(status: 401, now: 1_000_020) == nil)
    }

    @Test func aRotationRefusedWith401AlsoStopsTheChecks() {
        var gate = AccountGate(credential: credential())
        #expect(gate.rotationFailed(status: 401, now: 1_000_010) == .signInRequired)
        #expect(gate.nextStep(now: 1_000_011) == .refuse)
    }

    @Test func otherRotationFailuresKeepTheTokenAndRetryLater() {
        var gate = AccountGate(credential: credential())
        _ = gate.checkAnswered(status: 200, asksRotation: true)
        #expect(gate.rotationFailed(status: 503, now: 1_000_010) == nil)
        #expect(gate.nextStep(now: 1_000_011) == .check)
        #expect(gate.nextStep(now: 1_000_070) == .rotate)
        #expect(gate.credential.token == "ink_first")
    }

    @Test func theKeyringIsReadAgainOnlyWhilePausedAndNotTooOften() {
        var gate = AccountGate(credential: credential())
        #expect(!gate.shouldLookAtKeyring(now: 0))
        _ = gate.checkAnswered(status: 401, asksRotation: false)
        #expect(gate.shouldLookAtKeyring(now: 5_000))
        gate.lookedAtKeyring(now: 5_000)
        #expect(!gate.shouldLookAtKeyring(now: 14_999))
        #expect(gate.shouldLookAtKeyring(now: 15_000))
    }

    @Test func aRewrittenSignInMarkerMakesAPausedGateLookAtOnce() {
        var gate = AccountGate(credential: credential())
        let before = SignInMarker.Stamp(seconds: 1, nanoseconds: 0, inode: 1, size: 11)
        let after = SignInMarker.Stamp(seconds: 2, nanoseconds: 0, inode: 2, size: 11)
        // Not paused: the marker is no reason to look.
        #expect(!gate.shouldLookAtKeyring(now: 0, marker: after))
        _ = gate.checkAnswered(status: 401, asksRotation: false)
        gate.lookedAtKeyring(now: 5_000, marker: before)
        #expect(!gate.shouldLookAtKeyring(now: 5_001, marker: before))
        #expect(!gate.shouldLookAtKeyring(now: 5_001, marker: nil))
        #expect(gate.shouldLookAtKeyring(now: 5_001, marker: after))
        gate.lookedAtKeyring(now: 5_001, marker: after)
        #expect(!gate.shouldLookAtKeyring(now: 5_002, marker: after))
    }

    @Test func theRefusedTokenInTheKeyringDoesNotResume() {
        var gate = AccountGate(credential: credential())
        _ = gate.checkAnswered(status: 401, asksRotation: false)
        let same = gate.adopt(credential())
        #expect(!same.taken && same.event == nil)
        #expect(gate.nextStep(now: 1_000_010) == .refuse)
        let none = gate.adopt(nil)
        #expect(!none.taken)
    }

    @Test func aNewSignInResumesAndIsReported() {
        var gate = AccountGate(credential: credential())
        _ = gate.checkAnswered(status: 401, asksRotation: false)
        let fresh = gate.adopt(credential(token: "ink_again", obtained: 1_000_100))
        #expect(fresh.taken && fresh.event == .signedIn)
        #expect(gate.nextStep(now: 1_000_110) == .check)
        #expect(gate.credential.token == "ink_again")
        // And a later refusal is reported again.
        #expect(gate.checkAnswered(status: 401, asksRotation: false) == .signInRequired)
    }

    @Test func aTokenAnotherHelperRotatedIsTakenWithoutAnEvent() {
        var gate = AccountGate(credential: credential())
        let other = gate.adopt(credential(token: "ink_rotated_elsewhere", obtained: 1_000_100))
        #expect(other.taken && other.event == nil)
        #expect(gate.adopt(credential(token: "ink_rotated_elsewhere")).taken == false)
    }

    @Test func aRecordForAnotherServerIsNotTaken() {
        var gate = AccountGate(credential: credential())
        var elsewhere = credential(token: "ink_other")
        elsewhere.server = "https://other.example"
        #expect(!gate.adopt(elsewhere).taken)
    }
}

@Suite struct DeviceCredentialTests {
    @Test func theKeyringRecordRoundTrips() {
        let record = credential()
        #expect(DeviceCredential.decode(record.encoded) == record)
        #expect(record.encoded.contains("\"server\":\"https://inkling.example\""))
    }

    @Test func recordsThatCannotBeUsedAreRefused() {
        #expect(DeviceCredential.decode("sk-an-api-key") == nil)
        #expect(DeviceCredential.decode("{}") == nil)
        var spaced = credential()
        spaced.token = "ink_with space"
        #expect(DeviceCredential.decode(spaced.encoded) == nil)
        var newline = credential()
        newline.token = "ink_x\r\nX-Evil: 1"
        #expect(DeviceCredential.decode(newline.encoded) == nil)
        var future = credential()
        future.v = 2
        #expect(DeviceCredential.decode(future.encoded) == nil)
    }

    @Test func serverURLsAreNormalizedAndCheckedLikeTheEndpoint() {
        #expect(AccountServer.normalized("https://inkling.example/") == .success("https://inkling.example"))
        #expect(AccountServer.normalized("http://127.0.0.1:8080//") == .success("http://127.0.0.1:8080"))
        #expect(AccountServer.normalized("http://[::1]:9/") == .success("http://[::1]:9"))
        for bad in ["http://inkling.example", "ftp://x", "https://user:pw@x", "https://x?y", "https://", "https://a b"]
        {
            if case .success = AccountServer.normalized(bad) { Issue.record("accepted \(bad)") }
        }
        #expect(AccountServer.isLoopbackURL("http://localhost:80"))
        #expect(!AccountServer.isLoopbackURL("https://127.example"))
    }

    @Test func headerValuesAreReadCaseInsensitively() {
        #expect(HTTPHeaderLine.asksRotation(Array("Inkling-Rotate-Token: 1\r\n".utf8)))
        #expect(!HTTPHeaderLine.asksRotation(Array("Inkling-Rotate-Token: 0\r\n".utf8)))
        #expect(HTTPHeaderLine.retryAfterSeconds(Array("retry-after:\t30 \r\n".utf8)) == 30)
        #expect(HTTPHeaderLine.retryAfterSeconds(Array("HTTP/1.1 429 Too Many\r\n".utf8)) == nil)
        // A date, a sign or more than 9 digits is no delay the clients act on.
        for bad in [
            "Retry-After: Wed, 21 Oct 2026 07:28:00 GMT", "Retry-After: +30", "Retry-After: 1234567890", "Retry-After:",
        ] {
            #expect(HTTPHeaderLine.retryAfterSeconds(Array(bad.utf8)) == nil, "\(bad)")
        }
    }
}

@Suite struct AccountGateLimitTests {
    @Test func a429PausesTheChecksForRetryAfter() {
        var gate = AccountGate(credential: credential())
        #expect(gate.checkAnswered(status: 429, asksRotation: false, retryAfter: 30, now: 1_000_100) == nil)
        #expect(gate.nextStep(now: 1_000_100) == .wait)
        #expect(gate.nextStep(now: 1_000_129) == .wait)
        #expect(gate.nextStep(now: 1_000_130) == .check)
        #expect(!gate.signInRequired)
    }

    @Test func a429WithoutRetryAfterPausesAMinuteAndAHugeOneIsCapped() {
        var gate = AccountGate(credential: credential())
        _ = gate.checkAnswered(status: 429, asksRotation: false, retryAfter: nil, now: 1_000_000)
        #expect(gate.nextStep(now: 1_000_059) == .wait)
        #expect(gate.nextStep(now: 1_000_060) == .check)
        _ = gate.checkAnswered(status: 429, asksRotation: false, retryAfter: 999_999_999, now: 1_000_000)
        #expect(gate.nextStep(now: 1_003_599) == .wait)
        #expect(gate.nextStep(now: 1_003_600) == .check)
    }

    @Test func aClockSetBackDoesNotPauseForever() {
        var gate = AccountGate(credential: credential())
        _ = gate.checkAnswered(status: 429, asksRotation: false, retryAfter: 30, now: 1_000_000)
        // The wall clock jumped back a day: the pause would be a day long; it is dropped.
        #expect(gate.nextStep(now: 1_000_000 - 86_400) == .check)
    }

    @Test func a429AnsweredToTheRotationWaitsForItsRetryAfter() {
        var gate = AccountGate(credential: credential())
        let due: Int64 = 1_000_000 + 64_800
        #expect(gate.nextStep(now: due) == .rotate)
        #expect(gate.rotationFailed(status: 429, now: due, retryAfter: 300) == nil)
        // Checks go on with the current token; no rotation before the server's Retry-After.
        #expect(gate.nextStep(now: due + 61) == .check)
        #expect(gate.nextStep(now: due + 299) == .check)
        #expect(gate.nextStep(now: due + 300) == .rotate)
        // A short Retry-After is honoured too, not stretched to the flat retry delay.
        #expect(gate.rotationFailed(status: 429, now: due + 300, retryAfter: 5) == nil)
        #expect(gate.nextStep(now: due + 304) == .check)
        #expect(gate.nextStep(now: due + 305) == .rotate)
        // A huge one is capped like a check's.
        #expect(gate.rotationFailed(status: 429, now: due, retryAfter: 999_999_999) == nil)
        #expect(gate.nextStep(now: due + 3_599) == .check)
        #expect(gate.nextStep(now: due + 3_600) == .rotate)
    }

    @Test func aSignInRequiredWinsOverAPause() {
        var gate = AccountGate(credential: credential())
        _ = gate.checkAnswered(status: 429, asksRotation: false, retryAfter: 30, now: 1_000_000)
        _ = gate.checkAnswered(status: 401, asksRotation: false)
        #expect(gate.nextStep(now: 1_000_001) == .refuse)
    }
}

@Suite struct SignInMarkerTests {
    private func stamp(_ seconds: Int64) -> SignInMarker.Stamp {
        SignInMarker.Stamp(seconds: seconds, nanoseconds: 0, inode: 1, size: 11)
    }

    @Test func theKeyringIsLookedAtEveryIntervalWithoutAMarker() {
        var schedule = KeyringLookSchedule(interval: 30_000, lookedAt: 1_000, marker: nil)
        #expect(!schedule.isDue(now: 30_999, marker: nil))
        #expect(schedule.isDue(now: 31_000, marker: nil))
        schedule.looked(now: 31_000, marker: nil)
        #expect(!schedule.isDue(now: 31_001, marker: nil))
    }

    @Test func aRewrittenMarkerMakesTheNextCheckLookAtOnce() {
        var schedule = KeyringLookSchedule(interval: 30_000, lookedAt: 1_000, marker: stamp(5))
        // A marker from an earlier login, already seen at start: no reason to look.
        #expect(!schedule.isDue(now: 1_001, marker: stamp(5)))
        #expect(schedule.isDue(now: 1_001, marker: stamp(6)))
        schedule.looked(now: 1_001, marker: stamp(6))
        #expect(!schedule.isDue(now: 1_002, marker: stamp(6)))
        // A marker appearing where there was none counts as a sign-in too.
        var fresh = KeyringLookSchedule(interval: 30_000, lookedAt: 1_000, marker: nil)
        #expect(fresh.isDue(now: 1_001, marker: stamp(7)))
        fresh.looked(now: 1_001, marker: stamp(7))
        // A marker removed (runtime directory cleaned) is no sign-in.
        #expect(!fresh.isDue(now: 1_002, marker: nil))
    }

    @Test func aCheckGoesPastAnOpenCircuitWhenALookForASignInIsDue() {
        // The ordering behind the intermittent account test: started at 1 000 ms with a 100 ms
        // look interval, three checks without a key fail before the login finishes and open the
        // circuit; the login lands at 1 060 ms.
        var schedule = KeyringLookSchedule(interval: 100, lookedAt: 1_000, marker: stamp(5))
        #expect(!schedule.admits(now: 1_070, marker: stamp(5), breakerAllows: false))
        // The interval has passed: the check reaches the worker, which looks first.
        #expect(schedule.admits(now: 1_100, marker: stamp(5), breakerAllows: false))
        schedule.looked(now: 1_100, marker: stamp(5))
        #expect(!schedule.admits(now: 1_150, marker: stamp(5), breakerAllows: false))
        // A rewritten marker: at once, whatever the interval.
        #expect(schedule.admits(now: 1_101, marker: stamp(6), breakerAllows: false))
        // A closed circuit lets every check through, looking or not.
        #expect(schedule.admits(now: 1_150, marker: stamp(5), breakerAllows: true))
    }

    @Test func aMarkerRewrittenWithTheSameInodeTimeAndSizeStillCountsAsNew() throws {
        // ext4 reuses inodes: the third write within one coarse clock tick can get the first
        // one's inode, mtime and size. Simulated: the marker's text replaced in place by another
        // write's (same length) and its mtime put back.
        var template = Array("/tmp/inkling-marker-test-XXXXXX".utf8CString)
        let directory = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        let runtime = String(cString: directory)
        let path = runtime + "/inkling/signed-in"
        let other = runtime + "/other/signed-in"
        defer {
            for file in [path, other] { unlink(file) }
            for folder in [runtime + "/inkling", runtime + "/other", runtime] { rmdir(folder) }
        }
        SignInMarker.touch(path: path, now: 1_800_000_000)
        let first = try #require(SignInMarker.stamp(path: path))
        var text = [UInt8]()
        for _ in 0..<100 {
            SignInMarker.touch(path: other, now: 1_800_000_000)
            let candidate = try #require(SignInMarker.stamp(path: other))
            if candidate.size == first.size, candidate.written != first.written {
                text = Array(candidate.written.utf8)
                break
            }
        }
        try #require(!text.isEmpty, "no other write of the same length")
        let fd = open(path, O_WRONLY)
        try #require(fd >= 0)
        #expect(text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == text.count)
        var times = [
            timespec(tv_sec: Int(first.seconds), tv_nsec: Int(first.nanoseconds)),
            timespec(tv_sec: Int(first.seconds), tv_nsec: Int(first.nanoseconds)),
        ]
        #expect(futimens(fd, &times) == 0)
        close(fd)
        let second = try #require(SignInMarker.stamp(path: path))
        #expect(second.inode == first.inode && second.seconds == first.seconds)
        #expect(second.nanoseconds == first.nanoseconds && second.size == first.size)
        #expect(second != first)
        let schedule = KeyringLookSchedule(interval: 30_000, lookedAt: 1_000, marker: first)
        #expect(schedule.isDue(now: 1_001, marker: second))
    }

    @Test func withAnAPIKeyOnlyARewrittenMarkerMakesTheHelperLook() {
        // The helper's schedule when it has a key: no interval, a sign-in still wins.
        let schedule = KeyringLookSchedule(interval: .max, lookedAt: 1_000, marker: stamp(5))
        #expect(!schedule.isDue(now: 1_000 + 86_400_000, marker: stamp(5)))
        #expect(!schedule.admits(now: 1_000 + 86_400_000, marker: nil, breakerAllows: false))
        #expect(schedule.isDue(now: 1_001, marker: stamp(6)))
    }

    @Test func aMarkerThatIsNotARegularFileIsNoMarker() throws {
        var template = Array("/tmp/inkling-marker-test-XXXXXX".utf8CString)
        let directory = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        let runtime = String(cString: directory)
        let path = runtime + "/signed-in"
        defer {
            unlink(path)
            rmdir(runtime)
        }
        // A FIFO must neither hang the reader nor count as a sign-in.
        try #require(mkfifo(path, 0o600) == 0)
        #expect(SignInMarker.stamp(path: path) == nil)
        unlink(path)
        try #require(symlink("/etc/hostname", path) == 0)
        #expect(SignInMarker.stamp(path: path) == nil)
    }

    @Test func touchingTheMarkerChangesItsStamp() throws {
        var template = Array("/tmp/inkling-marker-test-XXXXXX".utf8CString)
        let directory = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        let runtime = String(cString: directory)
        defer {
            unlink(runtime + "/inkling/signed-in")
            rmdir(runtime + "/inkling")
            rmdir(runtime)
        }
        let path = try #require(SignInMarker.path(environment: { $0 == "XDG_RUNTIME_DIR" ? runtime : nil }))
        #expect(SignInMarker.path(environment: { _ in "relative" }) == nil)
        #expect(SignInMarker.stamp(path: path) == nil)
        SignInMarker.touch(path: path, now: 1_800_000_000)
        let first = try #require(SignInMarker.stamp(path: path))
        SignInMarker.touch(path: path, now: 1_800_000_000)
        let second = try #require(SignInMarker.stamp(path: path))
        // Same second, same content: the new file still differs (a fresh inode).
        #expect(first != second)
        var info = stat()
        #expect(stat(runtime + "/inkling", &info) == 0 && info.st_mode & 0o777 == 0o700)
    }
}
