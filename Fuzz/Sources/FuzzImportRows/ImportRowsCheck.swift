import Foundation
import OpenCoreData
import OpenCoreDataImport

// What this target checks, for any bytes given as an import file (the first byte picks the form: even for
// CSV with a header row, odd for JSON Lines; the rest is the file's text):
// - reading the file returns rows or throws an `ImportError` (CSV), never another error type and never a trap;
// - mapping its columns onto an entity with an attribute of every importable type never throws;
// - every row is either converted or refused, once, under its own location;
// - every converted row can be given to a new object of the entity (`setValue` accepts each value), so a
//   row the import accepts never fails later at insert time.
// A broken property calls `fuzzFailure`, which traps, so that libFuzzer saves the input as a crash.

/// Traps with a message; only this fuzz target does this, never the library.
func fuzzFailure(_ message: String) -> Never {
    fatalError("fuzz property failed: " + message)
}

/// One entity, `Row`, with an attribute of every type `ocd import` fills; `name` is required.
let importModelXML = """
<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
    <entity name="Row" representedClassName="Row">
        <attribute name="name" attributeType="String"/>
        <attribute name="small" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
        <attribute name="medium" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
        <attribute name="large" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
        <attribute name="ratio" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
        <attribute name="single" optional="YES" attributeType="Float" usesScalarValueType="YES"/>
        <attribute name="amount" optional="YES" attributeType="Decimal"/>
        <attribute name="flag" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>
        <attribute name="when" optional="YES" attributeType="Date"/>
        <attribute name="blob" optional="YES" attributeType="Binary"/>
        <attribute name="identifier" optional="YES" attributeType="UUID"/>
        <attribute name="link" optional="YES" attributeType="URI"/>
        <attribute name="count" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
    </entity>
</model>
"""

/// The model, coordinator and context every input uses (made once: libFuzzer calls the check in a loop).
let importSetting: (entity: EntityDescription, context: ManagedObjectContext) = {
    do {
        let model = try ManagedObjectModel(xmlData: Data(importModelXML.utf8), source: "FuzzImportRows")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        guard let entity = model.entitiesByName["Row"] else { fuzzFailure("the model has no Row entity") }
        return (entity, context)
    } catch {
        fuzzFailure("the fixed model cannot be set up: \(error)")
    }
}()

func checkImportRows(_ data: Data) {
    guard let form = data.first else { return }
    let text = String(decoding: data.dropFirst(), as: UTF8.self)
    let columns: [String]
    let records: [ImportRecord]
    if form % 2 == 0 {
        do {
            (columns, records) = try ImportRecordReader.csv(text)
        } catch is ImportError {
            return
        } catch {
            fuzzFailure("ImportRecordReader.csv threw \(type(of: error)), not an ImportError: \(error)")
        }
    } else {
        (columns, records) = ImportRecordReader.jsonLines(text)
    }
    let (entity, context) = importSetting
    let mapping: ColumnMapping
    do {
        mapping = try ColumnMapping(columns: columns, entity: entity, overrides: [])
    } catch {
        fuzzFailure("mapping columns without overrides threw: \(error)")
    }
    let (rows, refused) = RecordImporter.convert(records, mapping: mapping, entity: entity)
    if rows.count + refused.count != records.count {
        fuzzFailure("\(records.count) rows read, \(rows.count) converted and \(refused.count) refused")
    }
    let locations = Set(records.map(\.location))
    if records.count != locations.count { fuzzFailure("two rows share a location") }
    if let stray = refused.first(where: { !locations.contains($0.location) }) {
        fuzzFailure("a refusal names no row of the file: \(stray)")
    }
    context.performAndWait {
        defer { context.rollback() }
        for (index, values) in rows.enumerated() {
            do {
                let object = try context.insertNewObject(forEntityName: "Row")
                for (key, value) in values { try object.setValue(value, forKey: key) }
            } catch {
                fuzzFailure("converted row \(index) was refused by setValue: \(error)")
            }
        }
    }
}
