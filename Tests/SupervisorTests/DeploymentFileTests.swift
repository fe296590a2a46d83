import Supervisor
import Testing

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
            "bureau.yaml:4: processes.a.ready_timeout_s: 'soon' is not a number of seconds from 0.001 to 86400"
        ),
        (
            "processes:\n  a:\n    command: bus\nrestart:\n  max_restarts: -1\n",
            "bureau.yaml:5: restart.max_restarts: must be at least 0"
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

    @Test func backoffDoublesUpToTheCap() {
        let policy = RestartPolicy(
            initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(300), maximumRestarts: 9)
        #expect(
            (1...6).map { policy.backoff(beforeRestart: $0) }
                == [50, 100, 200, 300, 300, 300].map { .milliseconds($0) })
    }
}
