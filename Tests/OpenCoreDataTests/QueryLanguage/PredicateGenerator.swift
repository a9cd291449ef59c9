import Foundation
@testable import OpenCoreData

/// Random predicates over the agreement fixture's Person entity, as format strings with arguments, so the
/// parser is exercised along with evaluation and SQL compilation.
struct PredicateGenerator {
    var random: SeededGenerator

    mutating func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
    mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }

    mutating func stringConstant() -> String {
        let pool = (AgreementFixture.names + AgreementFixture.cities + AgreementFixture.titles).compactMap { $0 }
            + ["e", "E", "é", "ile", "ana", "ss", "ß", "-", "'", "\"", "%", "_"]
        return QueryLexer.quote(pick(pool))
    }

    mutating func modifier() -> String { pick(["", "", "[c]", "[d]", "[cd]"]) }

    mutating func likePattern() -> String {
        QueryLexer.quote(pick(["*mile", "?mile", "e*", "*", "", "*a*", "n?n?", "*ß*", "a\\%b*", "x\\*y\\?", "*-*"]))
    }

    mutating func regexPattern() -> String {
        QueryLexer.quote(pick([".*mile", "[a-z]+", "E.*", ".*[0-9]+", "", ".*", "n.n.( [0-9])?", "(?i)zoe"]))
    }

    mutating func numberConstant() -> String {
        pick(["0", "1", "-5", "17", "18", "42", "62", "99", "1.5", "1.78", "2.0", "-1.25", "12.5", "400", "512", "0x10", "1e2"])
    }

    /// A string comparison on `key`.
    mutating func stringComparison(_ key: String) -> String {
        let m = modifier()
        switch random.next() % 10 {
        case 0: return "\(key) ==\(m) \(chance(15) ? "nil" : stringConstant())"
        case 1: return "\(key) !=\(m) \(chance(15) ? "nil" : stringConstant())"
        case 2: return "\(key) \(pick(["<", "<=", ">", ">="]))\(m) \(stringConstant())"
        case 3: return "\(key) BEGINSWITH\(m) \(stringConstant())"
        case 4: return "\(key) ENDSWITH\(m) \(stringConstant())"
        case 5: return "\(key) CONTAINS\(m) \(stringConstant())"
        case 6: return "\(key) LIKE\(m) \(likePattern())"
        case 7: return "\(key) MATCHES\(m) \(regexPattern())"
        case 8: return "\(key) IN\(m) {\(stringConstant()), \(chance(30) ? "nil" : stringConstant())}"
        default: return "\(stringConstant()) IN\(m) \(key)"
        }
    }

    mutating func numberComparison(_ key: String) -> String {
        switch random.next() % 6 {
        case 0: return "\(key) \(pick(["==", "!="])) \(chance(15) ? "nil" : numberConstant())"
        case 1: return "\(key) BETWEEN {\(numberConstant()), \(numberConstant())}"
        case 2: return "\(key) IN {\(numberConstant()), \(numberConstant()), \(chance(30) ? "nil" : numberConstant())}"
        default: return "\(key) \(pick(["<", "<=", ">", ">="])) \(numberConstant())"
        }
    }

    mutating func arithmeticComparison() -> String {
        let lhs = pick(["age + 1", "age * 2", "age - score", "height / 2", "-age", "age ** 2", "abs:(age - 50)",
                        "(age + score) * 2", "height * 10 + 1", "age / 0", "now() - born"])
        return "\(lhs) \(pick(["<", ">", "==", ">=", "!="])) \(numberConstant())"
    }

    mutating func leaf() -> (String, [Any]) {
        switch random.next() % 34 {
        case 0, 1: return (stringComparison(pick(["name", "nickname"])), [])
        case 2: return (stringComparison("address.city"), [])
        case 3: return (numberComparison(pick(["age", "score", "height", "balance", "address.zip"])), [])
        case 4: return ("flag \(pick(["==", "!="])) \(pick(["YES", "NO", "nil", "1", "0", "TRUE"]))", [])
        case 5: return ("born \(pick(["<", ">", "==", "!=", "<="])) %@", [pick(AgreementFixture.dates)])
        case 6: return ("id \(pick(["==", "!="])) %@", [chance(80) ? pick(AgreementFixture.ids) : UUID()])
        case 7: return ("address \(pick(["==", "!="])) nil", [])
        case 8: return (arithmeticComparison(), [])
        case 9:
            let quantifier = pick(["", "ANY ", "ALL ", "NONE ", "SOME "])
            return (quantifier + (chance(50) ? stringComparison("books.title") : numberComparison(pick(["books.pages", "books.price"]))), [])
        case 10:
            let quantifier = pick(["", "ANY ", "ALL ", "NONE "])
            return (quantifier + stringComparison("clubs.name"), [])
        case 11: return ("books.@count \(pick(["==", ">", "<", "!="])) \(pick(["0", "1", "2", "3"]))", [])
        case 12: return ("clubs.@count \(pick(["==", ">", "<"])) \(pick(["0", "1", "2"]))", [])
        case 13:
            let op = pick(["@sum", "@avg", "@min", "@max"])
            return ("books.\(op).\(pick(["pages", "price"])) \(pick(["<", ">", ">=", "<="])) \(numberConstant())", [])
        case 14:
            let inner = chance(50) ? numberComparison("$b.pages") : stringComparison("$b.title")
            return ("SUBQUERY(books, $b, \(inner)).@count \(pick(["==", ">", ">="])) \(pick(["0", "1", "2"]))", [])
        case 15:
            return ("SUBQUERY(books, $b, $b.pages > age AND $b.title != nil).@count > 0", [])
        case 16:
            return ("ANY books.author.address.city \(pick(["==", "!="])) \(stringConstant())", [])
        case 17:
            return ("\(pick(["ANY", "ALL", "NONE"])) clubs.members.age \(pick(["<", ">", "=="])) \(numberConstant())", [])
        case 18:
            return ("%K \(pick(["<", ">", "=="])) %@", [pick(["age", "height", "score"]), pick([1, 18, 62] as [Any] + [1.5, Int16(7), Decimal(12.5)])])
        case 19: return ("%@ IN clubs.name", [pick(AgreementFixture.names.compactMap { $0 })])
        case 20: return (pick(["TRUEPREDICATE", "FALSEPREDICATE"]), [])
        case 21: return ("CAST(born, 'NSNumber') \(pick(["<", ">", "=="])) \(numberConstant())", [])
        case 22: return ("CAST(age, 'NSString') \(pick(["BEGINSWITH", "==", "ENDSWITH"])) \(QueryLexer.quote(pick(["1", "6", "62", "-"])))", [])
        case 23: return ("%@ IN books.title", [pick(AgreementFixture.titles.compactMap { $0 })])
        case 24: return ("name IN %@", [[pick(AgreementFixture.names.compactMap { $0 }), NSNull(), pick(AgreementFixture.names.compactMap { $0 })]])
        case 25: return ("books.@avg.price == \(pick(["12.5", "15", "9.99", "0.5"]))", [])
        case 26: return ("nickname \(pick(["==", "!=", "BEGINSWITH", "<"]))\(modifier()) name", [])
        case 27: return ("age \(pick(["BETWEEN", "IN"])) {score, \(numberConstant())}", [])
        case 28: return ("\(pick(["ANY", "ALL", "NONE", ""])) books.pages IN {400, 512, nil}", [])
        case 29: return ("SELF \(pick(["==", "!="])) nil", [])
        case 31: return ("\(pick(["ANY", "ALL", "NONE", ""])) favorites.\(pick(["pages", "price"])) \(pick(["<", ">", "=="])) \(numberConstant())", [])
        case 32: return ("favorites.@count \(pick(["==", ">", "<"])) books.@count", [])
        case 30: return ("ANY books.author.name ==\(modifier()) \(stringConstant())", [])
        default: return ("name \(pick(["==", "<", ">"])) nickname", [])
        }
    }

    mutating func predicate(depth: Int = 0) -> (String, [Any]) {
        guard depth < 3, chance(45) else { return leaf() }
        switch random.next() % 3 {
        case 0:
            let (a, x) = predicate(depth: depth + 1), (b, y) = predicate(depth: depth + 1)
            return ("(\(a)) \(pick(["AND", "&&"])) (\(b))", x + y)
        case 1:
            let (a, x) = predicate(depth: depth + 1), (b, y) = predicate(depth: depth + 1)
            return ("(\(a)) \(pick(["OR", "||"])) (\(b))", x + y)
        default:
            let (a, x) = predicate(depth: depth + 1)
            return ("\(pick(["NOT", "!"])) (\(a))", x)
        }
    }
}
