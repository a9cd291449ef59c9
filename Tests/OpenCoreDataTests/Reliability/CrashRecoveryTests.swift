import Foundation
import Testing
@testable import OpenCoreData

extension Reliability {
    /// A child process saves in a loop (inserts, edits, deletes across a cascade, a one-to-one, a many-to-many,
    /// and batch update/delete/insert requests) and is killed with SIGKILL at random moments. After each kill
    /// the store must open, pass integrity and layout invariants, and hold exactly the saves that returned.
    @Suite(.serialized) struct CrashRecoveryTests {
        /// How many kills the test runs; `OCD_CRASH_KILLS` raises it for longer runs (scripts/crash-kills.sh).
        static var kills: Int { ProcessInfo.processInfo.environment["OCD_CRASH_KILLS"].flatMap(Int.init) ?? 20 }

        /// The last iteration the worker logged (its save had returned before the line was written).
        static func lastLogged(_ log: URL) -> Int {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { Int($0) }.last ?? 0
        }

        struct Outcome {
            var iteration = 0
            /// The save had committed but the log line was not written yet.
            var aheadOfLog = false
            /// Killed between a batch request and the save after it.
            var betweenBatchAndSave = false
        }

        /// Checks the store after a kill; returns what it holds.
        static func verify(store: URL, log: URL, round: Int) throws -> Outcome {
            let logged = lastLogged(log)
            guard FileManager.default.fileExists(atPath: store.path) else {
                #expect(logged == 0, "round \(round): the store is gone but \(logged) saves returned")
                return Outcome()
            }
            // Opened writable first, as the app would: that is what recovers a hot journal or a WAL (a
            // read-only connection cannot roll a hot journal back; HotJournalTests).
            let model = try CrashModel.make()
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .sqlite, at: store)
            let problems = try StoreInvariants.violations(at: store, model: model)
            #expect(problems.isEmpty, "round \(round): \(problems)")
            let actual = try CrashModel.canonicalLines(of: coordinator)
            let committed = actual.first { $0.hasPrefix("progress ") }.flatMap { Int($0.dropFirst(9)) } ?? 0
            // The log is written after the save returns, so the store is at most one save ahead of it.
            #expect(committed == logged || committed == logged + 1,
                    "round \(round): store at iteration \(committed), log at \(logged)")

            let expectation = try WorkerProcess.run(["expect", String(committed)])
            #expect(expectation.status == 0)
            let sections = expectation.output.components(separatedBy: "==PARTIAL==\n")
            let full = sections[0].split(separator: "\n").map(String.init)
            let partial = sections.count > 1 ? sections[1].split(separator: "\n").map(String.init) : nil
            let matches = actual == full || actual == partial
            #expect(matches, "round \(round): the store differs from iteration \(committed): missing \(Set(full).subtracting(actual).sorted().prefix(5)), unexpected \(Set(actual).subtracting(full).sorted().prefix(5))")
            return Outcome(iteration: committed, aheadOfLog: committed == logged + 1,
                           betweenBatchAndSave: partial != nil && actual == partial)
        }

        @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage))
        func killedWriterLeavesExactlyTheReturnedSaves() throws {
            let directory = TemporaryDirectory()
            let store = directory.file("Crash.sqlite"), log = directory.file("crash.log")
            var random = SystemRandomNumberGenerator()
            var reached = 0, ahead = 0, betweenBatchAndSave = 0
            for round in 1...Self.kills {
                let worker = try WorkerProcess.start(["run", store.path, log.path])
                // Mostly mid-save kills; the first rounds also hit store creation.
                let delay = round <= 2 ? Double.random(in: 0.0...0.15, using: &random) : Double.random(in: 0.1...0.6, using: &random)
                Thread.sleep(forTimeInterval: delay)
                // SIGKILL: no handlers, no atexit, no flush, as close to pulling the plug as a process gets.
                worker.kill(SIGKILL)
                try worker.wait()
                let outcome = try Self.verify(store: store, log: log, round: round)
                reached = outcome.iteration
                if outcome.aheadOfLog { ahead += 1 }
                if outcome.betweenBatchAndSave { betweenBatchAndSave += 1 }
            }
            // The store moved on between kills (else the harness tested nothing; a sanitizer build is slow,
            // so only ask for progress, not for a pace).
            #expect(reached > 0)
            print("CrashRecoveryTests: \(Self.kills) kills survived, store at iteration \(reached); "
                  + "\(ahead) kill(s) after a commit but before its log line, \(betweenBatchAndSave) between a batch request and its save")
        }
    }
}
