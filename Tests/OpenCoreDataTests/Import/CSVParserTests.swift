import Foundation
import Testing
@testable import ocd
@testable import OpenCoreDataImport

@Suite("Import: CSV parser and FDIC records")
struct CSVParserTests {
    @Test func plainFieldsAndCRLF() throws {
        #expect(try CSVParser.parse("a,b\r\nc,d\r\n") == [["a", "b"], ["c", "d"]])
        #expect(try CSVParser.parse("a,b\nc,d") == [["a", "b"], ["c", "d"]])
        #expect(try CSVParser.parse("a,,c\r\n") == [["a", "", "c"]])
    }

    @Test func quotedFieldsKeepCommasQuotesAndLineBreaks() throws {
        let text = "\"Bank, N.A.\",\"He said \"\"hi\"\"\",\"two\r\nlines\"\r\nx,\"\",z\r\n"
        #expect(try CSVParser.parse(text) == [["Bank, N.A.", "He said \"hi\"", "two\r\nlines"], ["x", "", "z"]])
    }

    @Test func blankLinesAreSkipped() throws {
        #expect(try CSVParser.parse("a\r\n\r\nb\r\n") == [["a"], ["b"]])
    }

    @Test func malformedQuotesNameTheLine() {
        #expect(throws: CSVParser.Failure(line: 2, reason: "a quoted field is never closed")) {
            try CSVParser.parse("a\r\n\"open")
        }
        #expect(throws: CSVParser.Failure(line: 1, reason: "a quote inside an unquoted field")) {
            try CSVParser.parse("ab\"c")
        }
        #expect(throws: CSVParser.Failure(line: 1, reason: "text after a closing quote")) {
            try CSVParser.parse("\"ab\"c")
        }
    }

    @Test func closingDates() throws {
        let date = try #require(ClosingDate.parse("21-Oct-11"))
        #expect(DayFormat.string(from: date) == "2011-10-21")
        #expect(ClosingDate.parse("31-Feb-11") == nil)
        #expect(ClosingDate.parse("21-Foo-11") == nil)
        #expect(ClosingDate.parse("yesterday") == nil)
        #expect(ClosingDate.parse("1-Jan-99").map(DayFormat.string(from:)) == "1999-01-01")
    }

    @Test func theBundledListParses() throws {
        let records = try FailedBankRecord.records(fromCSV: BankImporter.bundledCSV())
        #expect(records.count == 561)
        #expect(records.allSatisfy { !$0.name.isEmpty && $0.state.count == 2 && $0.cert > 0 })
        // A quoted name with a comma survives whole.
        #expect(records.contains { $0.name == "Alabama Trust Bank, National Association" })
    }

    @Test func recordsRejectBadRowsWithALineNumber() {
        let header = "Bank Name,City,ST,CERT,Acquiring Institution,Closing Date\r\n"
        #expect(throws: FailedBankRecord.Failure.self) {
            try FailedBankRecord.records(fromCSV: header + "A,B,GA,notanumber,C,21-Oct-11\r\n")
        }
        #expect(throws: FailedBankRecord.Failure.self) {
            try FailedBankRecord.records(fromCSV: "Name,City\r\nA,B\r\n")
        }
    }
}
