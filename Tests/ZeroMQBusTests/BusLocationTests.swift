import Bus
import Foundation
import TestSupport
import Testing
import ZeroMQBus

/// How a client on this machine finds the bus: bus.json if a daemon wrote one, else the data
/// directory's ipc sockets, and a bus.json it cannot use is said, never taken for none.
struct BusLocationTests {
    @Test func withoutBusJSONTheIPCSocketsAreUsedAndNothingIsWrong() throws {
        let directory = try TemporaryDirectory("loc")
        let location = BusLocation(dataDirectory: directory.file("data"))
        #expect(try location.readInfo() == nil)
        var problems: [BusError] = []
        let endpoints = location.endpoints { problems.append($0) }
        #expect(endpoints == location.ipcEndpoints)
        #expect(problems.isEmpty)
    }

    @Test func aGarbledBusJSONIsSaidNamingTheFileAndTheIPCSocketsAreTried() throws {
        let directory = try TemporaryDirectory("loc")
        let location = BusLocation(dataDirectory: directory.file("data"))
        try FileManager.default.createDirectory(atPath: location.runDirectory, withIntermediateDirectories: true)
        try Data(#"{"pid": 12, "epoch":"#.utf8).write(to: URL(fileURLWithPath: location.infoFile))
        #expect {
            try location.readInfo()
        } throws: { error in
            "\(error)".hasPrefix("\(location.infoFile) is not what a bus daemon writes: ")
        }
        var problems: [BusError] = []
        let endpoints = location.endpoints { problems.append($0) }
        #expect(endpoints == location.ipcEndpoints)
        #expect(problems.count == 1)
    }

    @Test func aBusJSONThatCannotBeReadIsSaid() throws {
        let directory = try TemporaryDirectory("loc")
        let location = BusLocation(dataDirectory: directory.file("data"))
        // A directory where the file should be: it exists, and no read of it works.
        try FileManager.default.createDirectory(atPath: location.infoFile, withIntermediateDirectories: true)
        #expect {
            try location.readInfo()
        } throws: { error in
            "\(error)".hasPrefix("\(location.infoFile) cannot be used: ")
        }
    }

    @Test func aClientThatCannotUseBusJSONWarnsInItsLog() throws {
        let directory = try TemporaryDirectory("loc")
        let location = BusLocation(dataDirectory: directory.file("data"))
        try FileManager.default.createDirectory(atPath: location.runDirectory, withIntermediateDirectories: true)
        try Data("not json".utf8).write(to: URL(fileURLWithPath: location.infoFile))
        let log = CapturedLog()
        let client = try ZeroMQBusClient(location: location, options: .init(process: "test"), logger: log.logger("c"))
        defer { client.close() }
        #expect(client.endpoints == location.ipcEndpoints)
        let warnings = log.lines.filter { $0.level == .warning }.map(\.message)
        #expect(warnings == ["the bus's address file cannot be read; trying the data directory's ipc sockets"])
    }
}
