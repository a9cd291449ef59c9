import Foundation
import OpenCoreData

/// What a ``SyncServer`` serves and where.
public struct SyncServerConfiguration: Sendable {
    /// Where the server keeps its state: an SQLite file path (made when missing), or a `postgresql://` URL
    /// (several server instances may share one database).
    public var store: String
    /// The app's model: pushes are checked against it, and clients on another model are refused.
    public var model: ManagedObjectModel
    /// The key tokens are signed with (at least 32 bytes; ``SyncTokens/readKeyFile(at:)`` reads one).
    public var key: Data
    /// The address to listen on (loopback unless told otherwise: anything else should sit behind TLS).
    public var host: String
    /// The port (0: any free port, which ``SyncServer/start()`` returns).
    public var port: Int

    /// A configuration; `host` and `port` default to loopback and a free port.
    public init(store: String, model: ManagedObjectModel, key: Data, host: String = "127.0.0.1", port: Int = 0) {
        self.store = store
        self.model = model
        self.key = key
        self.host = host
        self.port = port
    }
}
