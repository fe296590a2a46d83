import ArgumentParser
import BureauCLI

/// The executable only names its entry point; every command lives in BureauCLI.
@main
extension Bureau {}
