import OpenCoreData

/// A model drawn as Xcode's model editor draws it, in SVG: a box per entity (its name, its attributes with
/// their types, its relationships), a line from each relationship to its destination (one arrowhead for a
/// to-one, two for a to-many end, which also reads `*`), and a dashed line from each subentity to its
/// parent. The boxes sit on a simple grid, in name order. Every name goes through ``HTMLText/escaped(_:)``.
struct ModelDiagram {
    /// The model drawn.
    let model: ManagedObjectModel

    private static let lineHeight = 18
    private static let headerHeight = 26
    private static let gap = 90
    private static let margin = 30
    private static let characterWidth = 7

    /// One entity's box on the grid.
    private struct Box {
        let entity: EntityDescription
        let lines: [(text: String, relationship: RelationshipDescription?)]
        var x = 0, y = 0, width = 0
        var height: Int { ModelDiagram.headerHeight + ModelDiagram.lineHeight * lines.count + 8 }

        init(_ entity: EntityDescription) {
            self.entity = entity
            var lines: [(text: String, relationship: RelationshipDescription?)] = []
            for property in entity.properties {
                if let attribute = property as? AttributeDescription {
                    lines.append(("\(attribute.name): \(attribute.attributeType.rawValue)", nil))
                } else if let relationship = property as? RelationshipDescription {
                    lines.append(("\(relationship.name) → \(relationship.destinationEntityName)\(relationship.isToMany ? " *" : "")",
                                  relationship))
                }
            }
            self.lines = lines
        }

        /// The vertical middle of line `index` (0 is the first property).
        func lineMiddle(_ index: Int) -> Int { y + ModelDiagram.headerHeight + ModelDiagram.lineHeight * index + 12 }
    }

    /// The diagram as a standalone SVG document.
    func svg() -> String {
        var boxes = model.entities.sorted { $0.name < $1.name }.map(Box.init)
        let longest = boxes.flatMap { [$0.entity.name] + $0.lines.map(\.text) }.map(\.count).max() ?? 10
        let width = max(160, longest * Self.characterWidth + 24)
        let columns = max(1, Int(Double(boxes.count).squareRoot().rounded(.up)))
        var y = Self.margin
        for rowStart in stride(from: 0, to: boxes.count, by: columns) {
            let row = rowStart..<min(rowStart + columns, boxes.count)
            for index in row {
                boxes[index].x = Self.margin + (index - rowStart) * (width + Self.gap)
                boxes[index].y = y
                boxes[index].width = width
            }
            y += (row.map { boxes[$0].height }.max() ?? 0) + Self.gap
        }
        let totalWidth = Self.margin * 2 + columns * width + (columns - 1) * Self.gap
        let totalHeight = max(y - Self.gap + Self.margin, Self.margin * 2)
        let byName = Dictionary(boxes.map { ($0.entity.name, $0) }, uniquingKeysWith: { first, _ in first })

        var lines: [String] = [], shapes: [String] = []
        for box in boxes {
            if let parent = box.entity.superentity, let parentBox = byName[parent.name] {
                lines.append("<line class=\"inherits\" x1=\"\(box.x + box.width / 2)\" y1=\"\(box.y)\" "
                    + "x2=\"\(parentBox.x + parentBox.width / 2)\" y2=\"\(parentBox.y + parentBox.height)\" "
                    + "marker-end=\"url(#parent)\"><title>\(HTMLText.escaped(box.entity.name)) inherits from "
                    + "\(HTMLText.escaped(parent.name))</title></line>")
            }
            for (index, line) in box.lines.enumerated() {
                guard let relationship = line.relationship, let destination = byName[relationship.destinationEntityName] else { continue }
                lines.append(relationshipLine(relationship, from: box, line: index, to: destination))
            }
            shapes.append(entityBox(box))
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(totalWidth)" height="\(totalHeight)" \
            viewBox="0 0 \(totalWidth) \(totalHeight)" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <defs>
            <marker id="one" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10" fill="none" stroke="#555"/></marker>
            <marker id="many" viewBox="0 0 16 10" refX="16" refY="5" markerWidth="12" markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 M6,0 L16,5 L6,10" fill="none" stroke="#555"/></marker>
            <marker id="parent" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="10" markerHeight="10" orient="auto"><path d="M0,0 L10,5 L0,10 Z" fill="#fff" stroke="#555"/></marker>
            </defs>
            <style>.inherits{stroke:#555;stroke-dasharray:6 4}.relationship{stroke:#555;fill:none}.entity{fill:#fff;stroke:#7a8ba0}.title{fill:#dde6f0;stroke:#7a8ba0}</style>
            \(lines.joined(separator: "\n"))
            \(shapes.joined(separator: "\n"))
            </svg>

            """
    }

    /// A box: the entity's name in its title bar (with `(abstract)`), then one line per property.
    private func entityBox(_ box: Box) -> String {
        let name = HTMLText.escaped(box.entity.name) + (box.entity.isAbstract ? " (abstract)" : "")
        var parts = [
            "<g class=\"entity-box\">",
            "<rect class=\"entity\" x=\"\(box.x)\" y=\"\(box.y)\" width=\"\(box.width)\" height=\"\(box.height)\" rx=\"4\"/>",
            "<rect class=\"title\" x=\"\(box.x)\" y=\"\(box.y)\" width=\"\(box.width)\" height=\"\(Self.headerHeight - 4)\" rx=\"4\"/>",
            "<text x=\"\(box.x + box.width / 2)\" y=\"\(box.y + 16)\" text-anchor=\"middle\" font-weight=\"bold\">\(name)</text>",
        ]
        for (index, line) in box.lines.enumerated() {
            parts.append("<text x=\"\(box.x + 10)\" y=\"\(box.lineMiddle(index) + 4)\""
                + (line.relationship != nil ? " font-style=\"italic\"" : "") + ">\(HTMLText.escaped(line.text))</text>")
        }
        parts.append("</g>")
        return parts.joined(separator: "\n")
    }

    /// A relationship's line: from its row's side of the box to the nearer side of the destination's box,
    /// two arrowheads at a to-many end; its title names the inverse and the delete rule.
    private func relationshipLine(_ relationship: RelationshipDescription, from box: Box, line index: Int, to destination: Box) -> String {
        let startY = box.lineMiddle(index), endY = destination.y + Self.headerHeight / 2
        let startX: Int, endX: Int, bend: Int
        if destination.x == box.x {
            // The same column (or the entity itself): out of the right-hand side and back into it.
            startX = box.x + box.width
            endX = destination.x + destination.width
            bend = startX + 40
        } else if destination.x > box.x {
            startX = box.x + box.width
            endX = destination.x
            bend = (startX + endX) / 2
        } else {
            startX = box.x
            endX = destination.x + destination.width
            bend = (startX + endX) / 2
        }
        let title = "\(relationship.name) → \(relationship.destinationEntityName)"
            + (relationship.isToMany ? " (to-many)" : " (to-one)")
            + (relationship.inverseName.map { ", inverse \($0)" } ?? ", no inverse")
            + ", delete rule \(relationship.deleteRule.rawValue)"
        return "<path class=\"relationship\" d=\"M\(startX),\(startY) C\(bend),\(startY) \(bend),\(endY) \(endX),\(endY)\" "
            + "marker-end=\"url(#\(relationship.isToMany ? "many" : "one"))\"><title>\(HTMLText.escaped(title))</title></path>"
    }
}
