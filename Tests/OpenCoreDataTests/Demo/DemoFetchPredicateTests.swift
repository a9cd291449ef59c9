import Foundation
import Testing

/// `ocd fetch --predicate` runs a real predicate in SQL (through to-one relationships too).
@Suite("Demo: ocd fetch with a predicate (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoFetchPredicateTests {
    @Test func predicateNarrowsTheFetchAndJSONShowsIt() throws {
        let binary = try #require(OcdBinary.url)
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Banks.sqlite").path
        #expect(try OcdBinary.run(["banks", "import", "--store", store], binary: binary).status == 0)

        // Alabama banks closed from 2011 on (CAST takes seconds since 2001: 315532800 is 2011-01-01).
        let json = try OcdBinary.run(["fetch", store, "--entity", "FailedBankInfo",
                                      "--predicate", "state == 'AL' AND details.closeDate >= CAST(315532800, 'NSDate')",
                                      "--sort", "details.closeDate:desc", "--sort", "name",
                                      "--keys", "name,state,details.closeDate", "--json"], binary: binary)
        #expect(json.status == 0, "\(json.stderr)")
        let rows = try json.stdout.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(rows.map { $0["name"] as? String } == ["Alabama Trust Bank, National Association", "Nexity Bank", "Superior Bank"])
        #expect(rows.allSatisfy { $0["state"] as? String == "AL" })
        #expect(rows.first?["details.closeDate"] as? String == "2012-05-18T00:00:00Z")

        let count = try OcdBinary.run(["fetch", store, "--entity", "FailedBankInfo", "--count",
                                       "--predicate", "name BEGINSWITH[cd] 'first' OR state IN {'AL', 'AR'}"],
                                      binary: binary)
        #expect(count.status == 0, "\(count.stderr)")
        let firsts = try OcdBinary.run(["fetch", store, "--entity", "FailedBankInfo", "--keys", "name,state", "--json"], binary: binary)
        let expected = firsts.stdout.split(separator: "\n").filter { line in
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            let name = (object?["name"] as? String ?? "").lowercased()
            return name.hasPrefix("first") || ["AL", "AR"].contains(object?["state"] as? String ?? "")
        }.count
        #expect(count.stdout == "\(expected)\n")

        for bad in ["state == ", "nosuchkey == 1"] {
            let output = try OcdBinary.run(["fetch", store, "--entity", "FailedBankInfo", "--predicate", bad], binary: binary)
            #expect(output.status != 0)
            #expect(output.stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }.count == 1, "\(output.stderr)")
        }
    }
}
