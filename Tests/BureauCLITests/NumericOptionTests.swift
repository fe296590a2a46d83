import ArgumentParser
import TestSupport
import Testing

@testable import BureauCLI

/// Every numeric option of every subcommand, given every kind of bad value, through the same
/// parsing `bureau` does: a clear error naming the option and the value, never a trap.
// Parses every subcommand many times over: on threads of its own, off the cooperative pool.
@Suite(.ownThreads)
struct NumericOptionTests {
    /// The message `bureau` prints for `arguments`, or nil if they parse.
    static func refusal(_ arguments: [String]) -> String? {
        do {
            _ = try Bureau.parseAsRoot(arguments)
            return nil
        } catch {
            return Bureau.message(for: error)
        }
    }

    /// One option per command, each given each kind of bad value.
    static let options: [(command: [String], option: String, range: String)] = [
        (["bus"], "--heartbeat-ms", "from 1 to 60000"),
        (["bus"], "--segment-mib", "from 1 to 4096"),
        (["bus"], "--publish-hwm", "from 1 to 100000"),
        (["bus"], "--ready-fd", "from 1 to 1048576"),
        (["run", "watchlist"], "--snapshot-every", "from 1 to 10000000"),
        (["serve", "rates"], "--pace", "from 0 to 10000"),
        (["serve", "rates"], "--port", "from 0 to 65535"),
        (["serve", "rates"], "--fail-first", "from 0 to 1000000"),
        (["serve", "booking"], "--latency", "from 0 to 600000"),
        (["serve", "booking"], "--failure-rate", "from 0 to 1"),
        (["serve", "booking"], "--stall-rate", "from 0 to 1"),
        (["serve", "booking"], "--stall", "from 1 to 600000"),
        (["serve", "booking"], "--oversize-rate", "from 0 to 1"),
        (["serve", "booking"], "--cut-rate", "from 0 to 1"),
        (["serve", "booking"], "--seed", "from 0 to 18446744073709551615"),
        (["send", "bureau://watchlist/add?base=EUR&quote=USD"], "--timeout", "from 0.001 to 3600"),
        (["publish"], "--timeout", "from 0.001 to 3600"),
        (["test", "x.yaml"], "--timeout", "from 0.001 to 3600"),
        (["logs"], "--tail", "from 0 to 1000000"),
    ]

    static let badValues = [
        "nan", "inf", "-inf", "99999999999999999999", "-99999999999999999999", "1e400", "-1", "0x10",
    ]

    @Test(arguments: badValues)
    func everyNumericOptionRefusesABadValueNamingTheOptionAndTheValue(value: String) {
        for (command, option, range) in Self.options {
            let message = Self.refusal(command + ["\(option)=\(value)"])
            #expect(message != nil, "\(command) \(option)=\(value) was accepted")
            guard let message else { continue }
            #expect(message.contains("'\(value)'"), "\(option): \(message)")
            #expect(message.contains(option), "\(option): \(message)")
            #expect(message.contains(range), "\(option): \(message)")
        }
    }

    @Test func zeroWhereItMakesNoSenseIsRefused() {
        for (command, option) in [
            (["bus"], "--heartbeat-ms"), (["bus"], "--segment-mib"), (["bus"], "--publish-hwm"),
            (["run", "watchlist"], "--snapshot-every"), (["send", "bureau://x/y"], "--timeout"),
        ] {
            let message = Self.refusal(command + ["\(option)=0"])
            #expect(message?.contains("'0' is out of range") == true, "\(option): \(message ?? "accepted")")
        }
    }

    @Test func theMessagesReadAsAPersonNeedsThem() {
        #expect(
            Self.refusal(["bus", "--heartbeat-ms", "nan"])
                == "The value 'nan' is invalid for '--heartbeat-ms <heartbeat-ms>': 'nan' is not a whole number "
                + "(give a whole number from 1 to 60000)")
        #expect(
            Self.refusal(["serve", "rates", "--pace", "inf"])
                == "The value 'inf' is invalid for '--pace <pace>': 'inf' is not a finite number "
                + "(give a number from 0 to 10000)")
        #expect(
            Self.refusal(["bus", "--segment-mib", "9223372036854775807"])
                == "The value '9223372036854775807' is invalid for '--segment-mib <segment-mib>': "
                + "'9223372036854775807' is out of range (give a whole number from 1 to 4096)")
    }

    @Test func aDurabilityIntervalIsBoundedToo() {
        let message = Self.refusal(["bus", "--durability", "interval=99999999999999999999"])
        #expect(
            message
                == "--durability interval=MS: '99999999999999999999' is too large "
                + "(give a whole number from 1 to 3600000)")
        #expect(Self.refusal(["bus", "--durability", "interval=0"])?.contains("'0' is out of range") == true)
    }

    @Test func aListenPortIsBounded() {
        #expect(
            Self.refusal(["bus", "--listen", "127.0.0.1:65534", "--insecure"])
                == "--listen 127.0.0.1:65534: the port '65534' is out of range (give a whole number from 1 to 65533)")
        #expect(
            Self.refusal(["bus", "--listen", "127.0.0.1:nan", "--insecure"])?.contains("'nan' is not a whole number")
                == true)
    }

    @Test func goodValuesAreRead() throws {
        let parsed = try Bureau.parseAsRoot(["bus", "--heartbeat-ms", "60000", "--segment-mib", "1"])
        let bus = try #require(parsed as? BusCommand)
        #expect(bus.heartbeatMs == 60_000 && bus.segmentMib == 1 && bus.publishHwm == 1000)
        let served = try Bureau.parseAsRoot(["serve", "booking", "--failure-rate", "0.5"])
        let serve = try #require(served as? ServeBooking)
        #expect(serve.failureRate == 0.5 && serve.latency == 0)
        let faulty = try Bureau.parseAsRoot([
            "serve", "booking", "--stall-rate", "0.2", "--stall", "700", "--oversize-rate", "0.1", "--cut-rate", "0.3",
            "--seed", "18446744073709551615",
        ])
        let configuration = try #require(faulty as? ServeBooking).serverConfiguration
        #expect(configuration.stallRate == 0.2 && configuration.stall == .milliseconds(700))
        #expect(configuration.oversizeRate == 0.1 && configuration.cutRate == 0.3)
        #expect(configuration.seed == .max && configuration.problem == nil)
    }

    @Test func faultSharesAddingUpToMoreThanOneAreRefused() {
        #expect(
            Self.refusal(["serve", "booking", "--failure-rate", "0.5", "--stall-rate", "0.3", "--cut-rate", "0.4"])
                == "the failure, stall, oversize and cut rates add up to 1.2; at most 1")
    }
}
