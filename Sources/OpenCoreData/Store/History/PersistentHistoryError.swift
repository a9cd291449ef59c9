import Foundation

/// Why a persistent-history request was refused.
public enum PersistentHistoryError: Error, CustomStringConvertible, LocalizedError, Sendable, Equatable {
    /// The store was not opened with ``StoreOptions/persistentHistoryTracking``: it keeps no registry of
    /// history readers (and records no history).
    case trackingOff(path: String)
    /// A history reader's name is empty or longer than 256 characters.
    case invalidReaderName(String)
    /// A history token given to a store belongs to another store's history.
    case tokenOfAnotherStore(token: String, store: String)

    public var description: String {
        switch self {
        case .trackingOff(let path):
            return "\(path) is not opened with persistent history tracking: history readers can only register on a store that records history."
        case .invalidReaderName(let name):
            return "History reader name \"\(name.prefix(80))\" is invalid: it must have 1 to \(HistoryReaderRegistry.maximumNameLength) characters."
        case .tokenOfAnotherStore(let token, let store):
            return "History token \(token) belongs to another store than \(store)."
        }
    }

    public var errorDescription: String? { description }
}
