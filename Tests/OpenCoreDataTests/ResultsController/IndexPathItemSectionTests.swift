import Foundation
import Testing
@testable import OpenCoreData

/// IndexPath(item:section:) and IndexPath(row:section:) against Foundation's IndexPath(indexes:).
@Suite struct IndexPathItemSectionTests {
    @Test(arguments: [(0, 0), (0, 1), (3, 17), (2, 1_000_000), (-1, 5), (Int.max, Int.min)])
    func equalsThePathFromAnArray(section: Int, item: Int) {
        let reference = IndexPath(indexes: [section, item])
        for path in [IndexPath(item: item, section: section), IndexPath(row: item, section: section)] {
            #expect(path.count == 2)
            #expect(path.section == section)
            #expect(path.item == item)
            #expect(path.row == item)
            #expect(Array(path) == [section, item])
            #expect(path == reference)
            #expect(path.hashValue == reference.hashValue)
            #expect(Set([reference]).contains(path))
            #expect(path.compare(reference) == .orderedSame)
        }
    }

    @Test func ordersLikeThePathFromAnArray() {
        let paths = [(1, 0), (0, 2), (0, 10), (1, 1), (0, 0)].map { IndexPath(item: $0.1, section: $0.0) }
        let references = [(1, 0), (0, 2), (0, 10), (1, 1), (0, 0)].map { IndexPath(indexes: [$0.0, $0.1]) }
        #expect(paths.sorted() == references.sorted())
        #expect(paths.sorted().map { [$0.section, $0.item] } == [[0, 0], [0, 2], [0, 10], [1, 0], [1, 1]])
    }
}
