import Guards
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// How a child's end is read and shown: exit codes and named signals, never a raw wait
/// status. (`Guards.ExitStatus` in full: Swift Testing has an `ExitStatus` of its own.)
struct ExitStatusTests {
    @Test func waitStatusesReadAsExitCodesAndSignals() {
        #expect(Guards.ExitStatus(waitStatus: 0) == .code(0))
        #expect(Guards.ExitStatus(waitStatus: 3 << 8) == .code(3))
        #expect(Guards.ExitStatus(waitStatus: SIGKILL) == .signal(SIGKILL))
        #expect(Guards.ExitStatus(waitStatus: SIGSEGV | 0x80) == .signal(SIGSEGV), "a core dump is still the signal")
        #expect(
            Guards.ExitStatus.code(0).succeeded && !Guards.ExitStatus.code(1).succeeded
                && !Guards.ExitStatus.signal(15).succeeded)
    }

    @Test func theFieldsOfProcessExitedReadTheSameWay() {
        #expect(Guards.ExitStatus(exitCode: 0, signal: SIGTERM) == .signal(SIGTERM))
        #expect(Guards.ExitStatus(exitCode: 2, signal: 0) == .code(2))
    }

    @Test func anEndIsShownAsAnExitCodeOrANamedSignal() {
        #expect(Guards.ExitStatus(waitStatus: 1 << 8).description == "exit code 1")
        #expect(Guards.ExitStatus(waitStatus: 256).text == "ended with exit code 1", "256 is what waitpid says")
        #expect(Guards.ExitStatus(waitStatus: SIGKILL).description == "signal SIGKILL (9)")
        #expect(Guards.ExitStatus.signal(SIGTERM).text == "ended by signal SIGTERM (15)")
        #expect(Guards.ExitStatus.signal(SIGSEGV).description == "signal SIGSEGV (11)")
        #expect(Guards.ExitStatus.signal(SIGHUP).description == "signal SIGHUP (1)")
        #expect(Guards.ExitStatus.signal(SIGSYS).description == "signal SIGSYS (31)")
        #expect(Guards.ExitStatus.signal(34).description == "signal SIGRTMIN (34)")
        #expect(Guards.ExitStatus.signal(36).description == "signal SIGRTMIN+2 (36)")
        #expect(Guards.ExitStatus.signal(99).description == "signal SIG? (99)")
    }

    @Test(arguments: [
        ("KILL", SIGKILL), ("SIGKILL", SIGKILL), ("kill", SIGKILL), ("9", SIGKILL), ("TERM", SIGTERM),
        ("sigcont", SIGCONT), ("31", SIGSYS),
    ])
    func aSignalIsNamedByItsNameWithOrWithoutSIGOrByItsNumber(text: String, signal: Int32) {
        #expect(Guards.ExitStatus.signal(named: text) == signal)
    }

    @Test(arguments: ["", "SIG", "0", "32", "-9", "SIGFOO", "9x", "RTMIN"])
    func anythingElseIsNoSignal(text: String) {
        #expect(Guards.ExitStatus.signal(named: text) == nil)
    }
}
