// `import OpenCoreData` makes Foundation's names available (URL, Date, UUID, NSNumber…), as `import CoreData`
// does on Apple's systems: a file ported from Core Data keeps its one import.
@_exported import Foundation
