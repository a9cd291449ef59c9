import Foundation

/// The process's resident memory, from /proc (Linux); 0 where that is not available.
enum ResidentMemory {
    static func megabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
            return digits / 1024   // the value is in kB
        }
        return 0
    }
}
