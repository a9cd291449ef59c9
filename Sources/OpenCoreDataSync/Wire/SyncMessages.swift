import Foundation

/// The body of `POST /v1/push`: local transactions in the order they were saved.
public struct SyncPushRequest: Sendable, Hashable, Codable {
    /// The client's model fingerprint (``SyncModelFingerprint``); a server on another model refuses the push.
    public var model: String
    /// The transactions, oldest first. The server applies them in order, all or none.
    public var transactions: [SyncTransaction]

    /// A push of `transactions` made with the model whose fingerprint is `model`.
    public init(model: String, transactions: [SyncTransaction]) {
        self.model = model
        self.transactions = transactions
    }
}

/// The answer to a push that the server applied.
public struct SyncPushResponse: Sendable, Hashable, Codable {
    /// Every pushed transaction ID, applied now or before (a repeat is acknowledged, not applied again).
    public var acknowledged: [String]
    /// The zone's token after the push.
    public var serverToken: Int64

    /// An acknowledgement.
    public init(acknowledged: [String], serverToken: Int64) {
        self.acknowledged = acknowledged
        self.serverToken = serverToken
    }
}

/// The answer to `GET /v1/pull?after=TOKEN&limit=N`: the zone's transactions after `after`, oldest first.
public struct SyncPullResponse: Sendable, Hashable, Codable {
    /// Transactions with `serverToken` greater than the one asked for, at most `limit`, oldest first.
    public var transactions: [SyncTransaction]
    /// The token to ask after next time: the last transaction's, or the one asked for when there are none.
    public var serverToken: Int64
    /// True when more transactions wait after `serverToken`.
    public var hasMore: Bool

    /// A page of pulled transactions.
    public init(transactions: [SyncTransaction], serverToken: Int64, hasMore: Bool) {
        self.transactions = transactions
        self.serverToken = serverToken
        self.hasMore = hasMore
    }
}

/// The body of every refusal (4xx and 5xx), beside its status code.
public struct SyncErrorResponse: Sendable, Hashable, Codable, Error {
    /// A stable, machine-readable reason: `unauthorized`, `model-mismatch`, `invalid-change`,
    /// `foreign-record`, `bad-request`, `server-error`.
    public var reason: String
    /// What was wrong, naming the culprit (the entity, key, record ID or both model fingerprints).
    public var message: String

    /// A refusal.
    public init(reason: String, message: String) {
        self.reason = reason
        self.message = message
    }
}
