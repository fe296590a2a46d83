// The test kit re-exports what `bureau test` runs scenario files with (fixtures, expectations,
// scenario files, deployments of processes): a test writes `import BusTesting` and has both.
@_exported import BusScenarios
