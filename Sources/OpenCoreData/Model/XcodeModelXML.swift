import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One element of an Xcode model's `contents` file: its name, attributes, children and where it starts.
///
/// The loader first reads the whole file into these nodes, then maps them to model types, so that the
/// mapping code is plain tree walking and every error can name the line it comes from.
final class XcodeModelXMLNode {
    /// How deeply elements may nest. Xcode writes at most five levels (model, entity, attribute, userInfo,
    /// entry); the cap keeps both the reading and the teardown of the tree (each node releases its
    /// children in its deinit, recursively) far from the end of the stack.
    static let maximumDepth = 64

    let name: String
    let attributes: [String: String]
    let line: Int
    let column: Int
    fileprivate(set) var children: [XcodeModelXMLNode] = []
    /// The element's own character data (used for the `.xccurrentversion` plist; model files keep
    /// everything in attributes).
    fileprivate(set) var text = ""

    init(name: String, attributes: [String: String], line: Int, column: Int) {
        self.name = name
        self.attributes = attributes
        self.line = line
        self.column = column
    }

    subscript(attribute: String) -> String? { attributes[attribute] }

    /// Children with this element name, in document order.
    func children(named childName: String) -> [XcodeModelXMLNode] { children.filter { $0.name == childName } }

    /// Where the element starts, for error messages.
    /// Where the element came from, for error messages: its line and column, or (for a node made in memory
    /// by ``init(name:attributes:children:origin:)``) what it was made from.
    var location: String { origin ?? "line \(line), column \(column)" }
    private var origin: String?

    /// A node made in memory rather than parsed: the reader of Xcode 3's binary models builds the tree the XML
    /// form would give, so that one loader maps both. `origin` names the archived object it stands for.
    convenience init(name: String, attributes: [String: String], children: [XcodeModelXMLNode], origin: String) {
        self.init(name: name, attributes: attributes, line: 0, column: 0)
        self.children = children
        self.origin = origin
    }

    /// Reads an XML document into a tree, or throws `ModelError.malformedModelFile` with the position
    /// XMLParser reports.
    static func parse(_ data: Data, source: String) throws -> XcodeModelXMLNode {
        // FoundationXML on Linux traps on element or attribute names that are not valid UTF-8, so the
        // bytes are checked first (Xcode always writes UTF-8).
        guard let text = String(validating: data, as: UTF8.self) else {
            throw ModelError.malformedModelFile(path: source, reason: "the file is not valid UTF-8 text")
        }
        // FoundationXML on Linux crashes on a processing instruction without data (`<?x?>`): it hands
        // libxml2's NULL to strlen. Xcode writes none but the leading XML declaration, so refuse any other.
        var rest = Substring(text)
        if let declaration = rest.range(of: "<?xml "), rest[..<declaration.lowerBound].allSatisfy(\.isWhitespace) {
            rest = rest[declaration.upperBound...]
        }
        if let instruction = rest.range(of: "<?") {
            let line = text[..<instruction.lowerBound].filter { $0 == "\n" }.count + 1
            throw ModelError.malformedModelFile(
                path: source, reason: "line \(line): processing instructions other than the XML declaration are not allowed")
        }
        let parser = XMLParser(data: data)
        // Model files never need external entities; resolving them would let a file reach other files.
        parser.shouldResolveExternalEntities = false
        let builder = TreeBuilder()
        parser.delegate = builder
        let succeeded = parser.parse()
        if let line = builder.tooDeepAtLine {
            throw ModelError.malformedModelFile(
                path: source,
                reason: "line \(line): elements nested deeper than \(XcodeModelXMLNode.maximumDepth) levels")
        }
        // XMLParser on Linux can return true and still record an error (e.g. an unclosed element), so
        // both are checked.
        if !succeeded || parser.parserError != nil {
            let code = (parser.parserError as NSError?)?.code ?? -1
            throw ModelError.malformedModelFile(
                path: source,
                reason: "invalid XML (parser error \(code)) at line \(parser.lineNumber), column \(parser.columnNumber)")
        }
        guard let root = builder.root else {
            throw ModelError.malformedModelFile(path: source, reason: "the file has no XML element")
        }
        return root
    }
}

/// XMLParser delegate that assembles ``XcodeModelXMLNode``s.
private final class TreeBuilder: NSObject, XMLParserDelegate {
    var root: XcodeModelXMLNode?
    /// Where an element went beyond ``XcodeModelXMLNode/maximumDepth``; parsing stops there.
    private(set) var tooDeepAtLine: Int?
    private var stack: [XcodeModelXMLNode] = []

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        guard tooDeepAtLine == nil else { return }
        guard stack.count < XcodeModelXMLNode.maximumDepth else {
            tooDeepAtLine = parser.lineNumber
            parser.abortParsing()
            return
        }
        let node = XcodeModelXMLNode(name: elementName, attributes: attributeDict,
                                     line: parser.lineNumber, column: parser.columnNumber)
        if let parent = stack.last {
            parent.children.append(node)
        } else if root == nil {
            root = node
        }
        stack.append(node)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard tooDeepAtLine == nil else { return }
        stack.last?.text += string
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?) {
        if tooDeepAtLine == nil, !stack.isEmpty { stack.removeLast() }
    }
}
