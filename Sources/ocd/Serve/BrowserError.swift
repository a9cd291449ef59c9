/// Why the browser cannot answer a request as asked: the HTTP status it answers with and a message naming
/// the culprit (shown escaped on an error page).
struct BrowserError: Error, CustomStringConvertible {
    /// The status the error page is sent with (400, 403, 404, 405).
    let status: Int
    /// What went wrong, naming the entity, object, key or predicate at fault.
    let message: String

    var description: String { message }

    /// A request the browser understood but cannot satisfy with what it names (400).
    static func badRequest(_ message: String) -> BrowserError { BrowserError(status: 400, message: message) }

    /// A page or object that does not exist (404).
    static func notFound(_ message: String) -> BrowserError { BrowserError(status: 404, message: message) }
}
