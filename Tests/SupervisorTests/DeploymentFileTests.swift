import Foundation
import Supervisor
import Testing
import YAMLFile

struct DeploymentFileTests {
    @Test func theDefaultDeploymentStartsTheBusAndServersBeforeWhatNeedsThem() throws {
        let deployment = try DeploymentFile.defaultDeployment()
        let order = deployment.startOrder.map(\.name)
        #expect(
            Set(order) == ["bus", "rates-server", "booking-server", "reducers", "rates-adapter", "booking-adapter"])
        for spec in deployment.processes {
            for dependency in spec.dependsOn {
                let before = try #require(order.firstIndex(of: dependency))
                let after = try #require(order.firstIndex(of: spec.name))
                #expect(before < after, "\(dependency) starts before \(spec.name)")
            }
        }
        #expect(deployment.processes.first { $0.name == "reducers" }?.arguments.first == "run")
    }

    @Test func settingsAndPerProcessOverridesAreRead() throws {
        let deployment = try DeploymentFile.parse(
            """
            processes:
              bus:
                command: [bus, --durability, "interval=5"]
              worker:
                command: run watchlist
                depends_on: [bus]
                ready_timeout_s: 2.5
                restart:
                  max_restarts: 1
            restart:
              initial_backoff_ms: 50
              max_backoff_ms: 400
              reset_after_s: 30
            stop_timeout_s: 3
            log_max_bytes: 65536
            """)
        #expect(deployment.processes.map(\.name) == ["bus", "worker"])
        #expect(deployment.processes[0].arguments == ["bus", "--durability", "interval=5"])
        let worker = deployment.processes[1]
        #expect(worker.readyTimeout == .milliseconds(2500))
        #expect(
            worker.restart
                == RestartPolicy(
                    initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(400), maximumRestarts: 1,
                    resetAfter: .seconds(30)))
        #expect(deployment.processes[0].restart.maximumRestarts == 5)
        #expect(deployment.stopTimeout == .seconds(3))
        #expect(deployment.logMaxBytes == 65536)
    }

    @Test func setupCommandsAreReadInOrderAndEachMustBeACommandURL() throws {
        let deployment = try DeploymentFile.parse(
            """
            processes:
              bus:
                command: bus
            setup:
              - bureau://reservations/commission?currency=USD&rate=0.005
              - bureau://reservations/commission?currency=JPY&rate=0.01
            """)
        #expect(
            deployment.setup == [
                "bureau://reservations/commission?currency=USD&rate=0.005",
                "bureau://reservations/commission?currency=JPY&rate=0.01",
            ])
        #expect(try DeploymentFile.defaultDeployment().setup.count == 4, "the default sets four commissions")
        #expect(try DeploymentFile.parse("processes:\n  bus:\n    command: bus\n").setup.isEmpty)
        #expect {
            _ = try DeploymentFile.parse(
                "processes:\n  bus:\n    command: bus\nsetup:\n  - bureau://a/b\n  - https://example.com/x\n")
        } throws: { error in
            "\(error)".contains("setup[1]: is not a command URL (bureau://MODULE/COMMAND?…): 'https://example.com/x'")
        }
    }

    @Test func aHostsDeploymentJoinsABusOnAnotherMachineWithKeysBesideTheFile() throws {
        let deployment = try DeploymentFile.parse(
            """
            bus:
              url: tcp://198.51.100.1:7400
              server_key: keys/bus.pub
              client_key: /etc/bureau/host-b.key
              wait_s: 30
            processes:
              reducers:
                command: run watchlist converter
                depends_on: [bus]
            """, file: "/srv/host-b/host-b.yaml")
        #expect(
            deployment.remoteBus
                == Deployment.RemoteBus(
                    url: "tcp://198.51.100.1:7400", serverKeyFile: "/srv/host-b/keys/bus.pub",
                    clientKeyFile: "/etc/bureau/host-b.key", waitTimeout: .seconds(30)))
        // The bus answers before anything here starts: nothing local to wait for.
        #expect(deployment.processes.map(\.dependsOn) == [[]])
        #expect(
            deployment.remoteBus?.environment == [
                "BUREAU_BUS": "tcp://198.51.100.1:7400", "BUREAU_SERVER_KEY": "/srv/host-b/keys/bus.pub",
                "BUREAU_CLIENT_KEY": "/etc/bureau/host-b.key",
            ])
        #expect(try DeploymentFile.defaultDeployment().remoteBus == nil)
    }

    @Test(arguments: [
        ("bus:\n  url: tcp://198.51.100.1:7400\n  sever_key: b.pub\n", "bureau.yaml:3: bus.sever_key: unknown field"),
        ("bus:\n  server_key: b.pub\n", "bureau.yaml:2: bus.url: is missing"),
        ("bus:\n  url: 198.51.100.1:7400\n", "bureau.yaml:2: bus.url: --bus takes tcp://HOST:PORT"),
        ("bus:\n  url: tcp://198.51.100.1:70000\n", "bureau.yaml:2: bus.url: --bus tcp://198.51.100.1:70000: the port"),
        ("bus:\n  url: tcp://h:7400\n  wait_s: -1\n", "bureau.yaml:3: bus.wait_s:"),
        ("bus:\n  url: tcp://h:7400\n  client_key: ''\n", "bureau.yaml:3: bus.client_key:"),
    ])
    func aMistakeInTheRemoteBusNamesTheLineAndTheField(bus: String, expected: String) {
        #expect {
            _ = try DeploymentFile.parse(bus + "processes:\n  reducers:\n    command: run watchlist\n")
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test func aStoreIsWhereTheBusKeepsItsLogAndEveryChildIsToldOfIt() throws {
        let deployment = try DeploymentFile.parse(
            "store: postgres://bureau@db:5432/events\nprocesses:\n  bus:\n    command: bus\n")
        #expect(deployment.store == "postgres://bureau@db:5432/events")
        #expect(try DeploymentFile.defaultDeployment().store == nil)
        // A host that joins a bus elsewhere keeps its reducers' snapshots in the same database.
        let joining = try DeploymentFile.parse(
            "bus:\n  url: tcp://h:7400\nstore: postgres://u@db/e\nprocesses:\n  reducers:\n    command: run watchlist\n"
        )
        #expect(joining.store == "postgres://u@db/e")
    }

    @Test(arguments: [
        (
            "store: mysql://db/events\n",
            "bureau.yaml:1: store: takes postgres://USER@HOST:PORT/DATABASE, not 'mysql://db/events'"
        ),
        ("store: ''\n", "bureau.yaml:1: store:"),
    ])
    func aMistakeInTheStoreNamesTheLine(text: String, expected: String) {
        #expect {
            _ = try DeploymentFile.parse(text + "processes:\n  reducers:\n    command: run watchlist\n")
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test func aDeploymentThatJoinsABusCannotRunOneToo() {
        #expect {
            _ = try DeploymentFile.parse(
                "bus:\n  url: tcp://198.51.100.1:7400\nprocesses:\n  bus:\n    command: bus\n")
        } throws: { error in
            "\(error)".contains(
                "bureau.yaml:5: processes.bus.command: runs a bus, but this deployment joins the bus at "
                    + "tcp://198.51.100.1:7400 (bus.url)")
        }
    }

    @Test(arguments: [
        ("processes:\n  bus:\n    comand: bus\n", "bureau.yaml:3: processes.bus.comand: unknown field"),
        ("processes:\n  bus:\n    depends_on: [x]\n", "bureau.yaml:3: processes.bus.command: is missing"),
        (
            "processes:\n  a:\n    command: bus\n    depends_on: [nope]\n",
            "bureau.yaml:3: processes.a.depends_on: 'nope' is not a process"
        ),
        (
            "processes:\n  a:\n    command: bus\n    depends_on: [b]\n  b:\n    command: bus\n    depends_on: [a]\n",
            "depends_on: is part of a dependency cycle"
        ),
        (
            "processes:\n  a:\n    command: bus\n    ready_timeout_s: soon\n",
            "bureau.yaml:4: processes.a.ready_timeout_s: 'soon' is not a number (give seconds from 0.001 to 86400)"
        ),
        (
            "processes:\n  a:\n    command: bus\nrestart:\n  max_restarts: -1\n",
            "bureau.yaml:5: restart.max_restarts: '-1' is out of range (give a whole number from 0 to 1000)"
        ),
        (
            "processes:\n  a:\n    command: --data x\n",
            "bureau.yaml:3: processes.a.command: should start with a bureau subcommand"
        ),
        (
            "processes:\n  a:\n    command: run x --set u=${b.ready}\n  b:\n    command: bus\n",
            "${b.ready} needs 'b' in depends_on"
        ),
        ("processes: [bus]\n", "bureau.yaml:1: processes: should be a mapping"),
        ("processes:\n  a: {command: bus\n", "bureau.yaml:3: not valid YAML"),
        ("", "bureau.yaml: the file is empty"),
        ("stop_timeout_s: 3\n", "processes: is missing"),
    ])
    func aMistakeNamesTheLineAndTheField(text: String, expected: String) {
        #expect {
            _ = try DeploymentFile.parse(text)
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    /// Every number of the file, given every kind of bad value: the line, the field, the value
    /// and the range; never a trap.
    @Test(arguments: [
        "nan", ".nan", "inf", ".inf", "-.inf", "99999999999999999999", "1e400", "-1", "[1]",
    ])
    func everyNumberRefusesABadValueNamingTheFieldAndTheValue(value: String) {
        let fields: [(yaml: String, line: Int, field: String)] = [
            ("restart:\n  initial_backoff_ms: \(value)\n", 5, "restart.initial_backoff_ms"),
            ("restart:\n  max_backoff_ms: \(value)\n", 5, "restart.max_backoff_ms"),
            ("restart:\n  max_restarts: \(value)\n", 5, "restart.max_restarts"),
            ("restart:\n  reset_after_s: \(value)\n", 5, "restart.reset_after_s"),
            ("ready_timeout_s: \(value)\n", 4, "ready_timeout_s"),
            ("stop_timeout_s: \(value)\n", 4, "stop_timeout_s"),
            ("log_max_bytes: \(value)\n", 4, "log_max_bytes"),
            ("  a:\n    command: bus\n    ready_timeout_s: \(value)\n", 6, "processes.a.ready_timeout_s"),
            (
                "  b:\n    command: bus\n    restart: {max_backoff_ms: \(value)}\n", 6,
                "processes.b.restart.max_backoff_ms"
            ),
        ]
        for (yaml, line, field) in fields {
            // The lines given are appended under the `processes:` of a valid file.
            let text = "processes:\n  bus:\n    command: bus\n" + yaml
            #expect {
                _ = try DeploymentFile.parse(text)
            } throws: { error in
                let message = "\(error)"
                let named = message.hasPrefix("bureau.yaml:\(line): \(field): ")
                let quoted =
                    value.hasPrefix("[") ? message.contains("should be a number") : message.contains("'\(value)'")
                let ranged = value.hasPrefix("[") || message.contains("(give ")
                return named && quoted && ranged
            }
        }
    }

    @Test func zeroWhereItMakesNoSenseIsRefused() {
        for yaml in ["restart:\n  initial_backoff_ms: 0\n", "stop_timeout_s: 0\n", "log_max_bytes: 0\n"] {
            #expect {
                _ = try DeploymentFile.parse("processes:\n  bus:\n    command: bus\n" + yaml)
            } throws: { error in
                "\(error)".contains("'0' is out of range")
            }
        }
    }

    @Test func theLargestBackoffsDoubleWithoutOverflow() throws {
        let deployment = try DeploymentFile.parse(
            "processes:\n  bus:\n    command: bus\nrestart:\n  initial_backoff_ms: 86400000\n"
                + "  max_backoff_ms: 86400000\n  max_restarts: 1000\n")
        let policy = try #require(deployment.processes.first?.restart)
        #expect(policy.backoff(beforeRestart: 1000) == .seconds(86_400))
    }

    @Test func aBillionLaughsIsRefusedQuicklyNamingTheLine() throws {
        var text =
            "processes:\n  bus:\n    command: bus\nlaughs:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for (name, previous) in zip("bcdefghi", "abcdefgh") {
            text += "  \(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ", ") + "]\n"
        }
        let started = ContinuousClock.now
        #expect {
            _ = try DeploymentFile.parse(text)
        } throws: { error in
            "\(error)".hasPrefix("bureau.yaml:10: expands to more than 100000 nodes once its aliases are expanded")
        }
        #expect(ContinuousClock.now - started < .seconds(2), "refused without expanding")
    }

    @Test func aFewAliasesAreFine() throws {
        let deployment = try DeploymentFile.parse(
            """
            restart: &fast
              initial_backoff_ms: 10
            processes:
              bus:
                command: bus
                restart: *fast
            """)
        #expect(deployment.processes.first?.restart.initialBackoff == .milliseconds(10))
    }

    @Test func deepNestingIsRefused() {
        let nested = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect {
            _ = try DeploymentFile.parse("processes:\n  bus:\n    command: \(nested)\n")
        } throws: { error in
            "\(error)" == "bureau.yaml:3: nests deeper than 64 levels"
        }
        // libyaml's own limit (1000 levels) stops a document that never closes.
        #expect(throws: YAMLFileError.self) {
            _ = try DeploymentFile.parse("processes:\n  bus:\n    command: " + String(repeating: "[", count: 100_000))
        }
    }

    @Test func anOversizedFileIsRefusedNamingItAndTheLimit() throws {
        let path = NSTemporaryDirectory() + "oversized-\(UUID().uuidString).yaml"
        let text = "processes:\n  bus:\n    command: bus\n" + String(repeating: "# filler\n", count: 120_000)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(
            throws: YAMLFileError(
                file: path, line: nil, field: nil, problem: "is larger than 1 MiB, the limit for a file the tool reads")
        ) {
            _ = try DeploymentFile.parse(try YAMLReader.text(ofFile: path), file: path)
        }
        #expect {
            _ = try DeploymentFile.parse(text)
        } throws: { error in
            "\(error)" == "bureau.yaml: is larger than 1 MiB, the limit for a file the tool reads"
        }
    }

    @Test func backoffDoublesUpToTheCap() {
        let policy = RestartPolicy(
            initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(300), maximumRestarts: 9)
        #expect(
            (1...6).map { policy.backoff(beforeRestart: $0) }
                == [50, 100, 200, 300, 300, 300].map { .milliseconds($0) })
    }
}
