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
            // A NUL inside a constant is part of it, in SQL as in memory.
            + ["Émile\u{0}x", "\u{0}", "nana\u{0}", "file\u{0}2"]
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
        switch random.next() % 50 {
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
        case 33: return mixedKindComparison()
        case 34, 35: return indexComparison()
        case 36: return literalIndexComparison()
        case 37, 38: return ternaryComparison()
        case 39, 40: return numberFunctionComparison()
        case 41: return stringFunctionComparison()
        case 42: return aggregateFunctionComparison()
        case 43, 44: return unionComparison()
        default: return ("name \(pick(["==", "<", ">"])) nickname", [])
        }
    }

    mutating func noteText() -> String {
        QueryLexer.quote(pick(AgreementFixture.noteTexts.compactMap { $0 } + ["t", "d", "é"]))
    }

    /// `[FIRST]`, `[LAST]`, `[n]` on the ordered `notes` (past the end too), `[SIZE]` on any to-many.
    mutating func indexComparison() -> (String, [Any]) {
        let position = pick(["FIRST", "LAST", "0", "1", "2", "4", "7", "1 + 1", "-1", "0.5"])
        switch random.next() % 12 {
        case 0: return ("notes[\(position)].text \(pick(["==", "!=", "BEGINSWITH", "<"]))\(modifier()) \(noteText())", [])
        case 1: return ("notes[\(position)].rank \(pick(["==", "<", ">", "!="])) \(pick(["nil", "0", "2", "3", "5"]))", [])
        case 2: return ("notes.text[\(position)] \(pick(["==", "CONTAINS", "ENDSWITH"]))\(modifier()) \(noteText())", [])
        case 3: return ("notes[%d].rank \(pick([">", "==", "<="])) %d", [pick([-1, 0, 1, 3, 9]), pick([0, 2, 5])])
        case 4: return ("notes[\(position)] \(pick(["==", "!="])) nil", [])
        case 5: return ("notes[\(position)].owner.age \(pick(["<", ">", "=="])) \(numberConstant())", [])
        case 6: return ("\(pick(["notes", "books", "clubs", "favorites", "notes.text", "books.author"]))[SIZE] \(pick(["==", ">", "<", "!="])) \(pick(["0", "1", "2", "3"]))", [])
        case 7: return ("count:(\(pick(["notes", "books", "clubs", "notes.rank"]))) \(pick(["==", ">", "<"])) \(pick(["0", "1", "2"]))", [])
        case 8: return ("notes[\(position)].rank == notes[\(pick(["FIRST", "LAST", "1"]))].rank", [])
        case 9: return ("SUBQUERY(notes, $n, $n.rank > \(pick(["0", "2", "4"])))[SIZE] \(pick(["==", ">="])) \(pick(["0", "1", "2"]))", [])
        case 10: return ("SUBQUERY(clubs, $c, $c.members[SIZE] > \(pick(["1", "3", "6"]))).@count > 0", [])
        default: return ("\(pick(["ANY", "ALL", "NONE"])) notes.text[\(position)] ==\(modifier()) \(noteText())", [])
        }
    }

    /// Indexes into `{…}` literals and array arguments, with constant and computed positions.
    mutating func literalIndexComparison() -> (String, [Any]) {
        switch random.next() % 7 {
        case 0: return ("{1, 17, 42, 99}[\(pick(["0", "2", "3", "4", "FIRST", "LAST", "-1"]))] \(pick(["==", "<", ">"])) age", [])
        case 1: return ("%@[\(pick(["FIRST", "LAST", "1", "5"]))] == score", [pick([[3, 7], [10], [] as [Int], [0, 3, 7, 10]])])
        case 2: return ("{age, score, 99}[\(pick(["0", "1", "2", "3", "LAST"]))] > \(numberConstant())", [])
        case 3: return ("{1, 2, 3, 4}[score / 3] \(pick(["==", ">", "!="])) \(pick(["nil", "1", "2", "4"]))", [])
        case 4: return ("{name, nickname}[flag] ==\(modifier()) \(stringConstant())", [])
        case 5: return ("{}[\(pick(["SIZE", "FIRST", "0"]))] \(pick(["==", "!="])) \(pick(["0", "nil"]))", [])
        default: return ("{{1, 2}, {42}}[\(pick(["0", "1"]))][\(pick(["0", "1", "SIZE"]))] \(pick(["==", "<"])) \(numberConstant())", [])
        }
    }

    mutating func ternaryComparison() -> (String, [Any]) {
        switch random.next() % 7 {
        case 0: return ("TERNARY(age > 18, score, height) \(pick([">", "<", "=="])) \(numberConstant())", [])
        case 1: return ("TERNARY(nickname == nil, name, nickname) \(pick(["BEGINSWITH", "==", "<"]))\(modifier()) \(stringConstant())", [])
        case 2: return ("TERNARY(address.city ==\(modifier()) 'paris', 1, 0) == \(pick(["0", "1"]))", [])
        case 3: return ("TERNARY(ANY books.pages > 400, books.@count, -1) \(pick([">=", "=="])) \(pick(["-1", "1", "2"]))", [])
        case 4: return ("TERNARY(flag == YES, nil, age) \(pick(["==", "!="])) \(pick(["nil", "42", "18"]))", [])
        case 5: return ("TERNARY(notes[FIRST].rank > 2, notes[LAST].text, name) ==\(modifier()) \(noteText())", [])
        default: return ("TERNARY(age > 40 OR score == 0, TERNARY(flag == NO, 1, 2), 3) == \(pick(["1", "2", "3"]))", [])
        }
    }

    mutating func numberFunctionComparison() -> (String, [Any]) {
        let lhs = pick([
            "sqrt:(age)", "log:(height)", "ln:(age)", "exp:(score)", "ceiling:(height)", "floor:(height)", "trunc:(height)",
            "modulus:by:(age, 7)", "modulus:by:(age, score)", "modulus:by:(height, 0.5)", "modulus:by:(balance, 5)",
            "modulus:by:(-age, 5)", "divide:by:(age, score)", "raise:toPower:(score, 2)", "add:to:(age, score)",
            "from:subtract:(age, score)", "multiply:by:(height, 2)", "abs:(from:subtract:(age, 50))", "noindex:(age)",
            "FUNCTION(age, 'sqrt:')", "FUNCTION(age, 'modulus:by:', 5)", "sqrt:(born)", "ceiling:(balance)",
            "trunc:(age / 4)", "floor:(CAST(born, 'NSNumber') / 86400)", "abs:(height) + ceiling:(score / 2)",
        ])
        if chance(5) { return ("random() \(pick(["<", ">="])) \(pick(["0", "1"]))", []) }
        return ("\(lhs) \(pick(["<", ">", "==", ">=", "!="])) \(pick(["nil", "0", "1", "2", "3", "4.5", "6", "-1", "49", "100"]))", [])
    }

    mutating func stringFunctionComparison() -> (String, [Any]) {
        let lhs = pick(["uppercase:(name)", "lowercase:(name)", "uppercase:(address.city)", "lowercase:(nickname)",
                        "FUNCTION(name, 'uppercaseString')", "FUNCTION(name, 'lowercaseString')", "uppercase:(age)"])
        switch random.next() % 4 {
        case 0: return ("\(lhs) \(pick(["==", "BEGINSWITH", "CONTAINS", "<", "!="]))\(modifier()) \(QueryLexer.quote(pick(["STRASSE", "ÉMILE", "émile", "zoë", "PARIS", "E", "é", "", "ZÜRICH"])))", [])
        case 1: return ("\(pick(["length:(name)", "length:(address.city)", "FUNCTION(nickname, 'length')", "length:(age)"])) \(pick(["==", ">", "<"])) \(pick(["nil", "0", "4", "5", "6", "7"]))", [])
        case 2: return ("\(lhs) IN {'STRASSE', 'ZOË', 'émile', nil}", [])
        default: return ("\(lhs) == \(pick(["uppercase:(nickname)", "name", "lowercase:(name)"]))", [])
        }
    }

    mutating func aggregateFunctionComparison() -> (String, [Any]) {
        let lhs = pick(["median:(books.pages)", "median:(books.price)", "FUNCTION(books.pages, 'median:')", "median:(notes.rank)",
                        "median:(books.title)", "sum:(books.pages)", "average:(notes.rank)", "max:(notes.rank)",
                        "min:(favorites.price)", "median:({age, score, 7})", "median:({1, 2, 4})"])
        return ("\(lhs) \(pick(["<", ">", "==", ">=", "!="])) \(pick(["nil", "0", "2", "2.5", "3", "12.5", "300", "400", "456", "1000"]))", [])
    }

    /// The union operators where SQL can compile them: IN, CONTAINS, ANY/ALL/NONE, @count, [SIZE], aggregates.
    mutating func unionComparison() -> (String, [Any]) {
        let union = pick(["@unionOfObjects", "@distinctUnionOfObjects", "@unionOfArrays", "@distinctUnionOfArrays", "@distinctUnionOfSets"])
        switch random.next() % 10 {
        case 0: return ("%@ IN\(modifier()) books.\(union).title", [pick(AgreementFixture.titles.compactMap { $0 })])
        case 1: return ("books.\(union).\(pick(["pages", "title", "price"])).@count \(pick(["==", ">", "<"])) \(pick(["0", "1", "2", "3"]))", [])
        case 2: return ("\(pick(["ANY", "ALL", "NONE", ""])) books.\(union).title \(pick(["BEGINSWITH", "==", "<"]))\(modifier()) \(stringConstant())", [])
        case 3: return ("\(pick(["ANY", "ALL", "NONE"])) notes.\(union).rank \(pick(["<", ">", "=="])) \(pick(["0", "2", "3", "8"]))", [])
        case 4: return ("books.\(union).\(pick(["pages", "price"])).\(pick(["@sum", "@avg", "@min", "@max"])) \(pick(["<", ">", "=="])) \(numberConstant())", [])
        case 5: return ("clubs.\(union).name CONTAINS\(modifier()) \(stringConstant())", [])
        case 6: return ("\(pick(["count:", "sum:", "median:", "average:"]))(notes.\(union).rank) \(pick(["<", ">", "=="])) \(pick(["0", "1", "2", "3", "5"]))", [])
        case 7: return ("notes.\(union).text[SIZE] \(pick(["==", ">"])) \(pick(["0", "1", "2"]))", [])
        case 8: return ("\(pick(["nil", "'todo'", "''"])) IN notes.\(union).text", [])
        default: return ("\(union == "@unionOfObjects" ? "NONE" : "ANY") notes.\(union).text ==\(modifier()) \(noteText())", [])
        }
    }

    /// A number compared with a string: a numeric key or expression with a string constant that spells a
    /// number (or does not), and a string key with a number.
    mutating func mixedKindComparison() -> (String, [Any]) {
        let spelled = pick(["'42'", "'17'", "' 62 '", "'1.5'", "'1e2'", "'-5'", "'abc'", "''", "'0x10'", "'18.0'",
                            "'1.78'", "'99 '", "'-1.25'", "'4\\u00002'"])
        let numeric = pick(["age", "score", "height", "balance", "flag", "address.zip", "age + 1", "books.@count",
                            "TERNARY(flag == YES, age, score)", "notes[FIRST].rank", "max:(age, score)", "born",
                            "books.@max.pages", "{17, 42}[flag]"])
        let textual = pick(["name", "nickname", "address.city", "uppercase:(name)", "TERNARY(flag == YES, name, nickname)",
                            "notes[LAST].text", "CAST(age, 'NSString')"])
        let op = pick(["==", "!=", "<", "<=", ">", ">="])
        let number = numberConstant()
        switch random.next() % 9 {
        case 0, 1: return ("\(numeric) \(op) \(spelled)", [])
        case 2: return ("\(spelled) \(op) \(numeric)", [])
        case 3: return ("\(textual) \(op) \(pick([number, "-5", "42", "100", "1.5"]))", [])
        case 4: return ("\(numeric) \(pick(["IN", "==", "<"])) \(pick(["name", "nickname", "notes[FIRST].text"]))", [])
        case 5: return ("\(numeric) IN {\(spelled), \(number), \(pick(["nil", spelled]))}", [])
        case 6: return ("\(numeric) BETWEEN {\(spelled), \(pick([spelled, number]))}", [])
        case 7: return ("\(pick(["ANY", "ALL", "NONE", ""])) books.\(pick(["pages", "price", "title"])) \(op) \(pick([spelled, number]))", [])
        default: return ("\(numeric) \(op) %@", [pick(["42", "17", " 1.5", "x", "-5"] as [Any])])
        }
    }

    /// Only the forms added with the index operators: indexes, TERNARY, functions, unions.
    mutating func extendedLeaf() -> (String, [Any]) {
        switch random.next() % 9 {
        case 0, 1: return indexComparison()
        case 2: return literalIndexComparison()
        case 3: return ternaryComparison()
        case 4: return numberFunctionComparison()
        case 5: return stringFunctionComparison()
        case 6: return aggregateFunctionComparison()
        default: return unionComparison()
        }
    }

    /// A random predicate: any leaf, only the extended forms, or only numbers compared with strings.
    mutating func predicate(depth: Int = 0, extendedOnly: Bool = false, mixedKindsOnly: Bool = false) -> (String, [Any]) {
        guard depth < 3, chance(45) else {
            if mixedKindsOnly { return chance(70) ? mixedKindComparison() : leaf() }
            return extendedOnly ? extendedLeaf() : leaf()
        }
        switch random.next() % 3 {
        case 0:
            let (a, x) = predicate(depth: depth + 1, extendedOnly: extendedOnly, mixedKindsOnly: mixedKindsOnly)
            let (b, y) = predicate(depth: depth + 1, extendedOnly: extendedOnly, mixedKindsOnly: mixedKindsOnly)
            return ("(\(a)) \(pick(["AND", "&&"])) (\(b))", x + y)
        case 1:
            let (a, x) = predicate(depth: depth + 1, extendedOnly: extendedOnly, mixedKindsOnly: mixedKindsOnly)
            let (b, y) = predicate(depth: depth + 1, extendedOnly: extendedOnly, mixedKindsOnly: mixedKindsOnly)
            return ("(\(a)) \(pick(["OR", "||"])) (\(b))", x + y)
        default:
            let (a, x) = predicate(depth: depth + 1, extendedOnly: extendedOnly, mixedKindsOnly: mixedKindsOnly)
            return ("\(pick(["NOT", "!"])) (\(a))", x)
        }
    }
}
