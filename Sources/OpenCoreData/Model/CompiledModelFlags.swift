import Foundation

/// The packed flag fields of a compiled model's archive, decoded as Core Data's own `initWithCoder:` decodes
/// them (a published decompilation of Core Data; docs/INTEROP.md lists the sources).
///
/// A property archives `_P` (Int32) beside its boolean keys; when `_P` is not zero Core Data takes the
/// property's flags from it and ignores the booleans. An attribute archives `NSFlagsKey` (Int32).
struct CompiledPropertyFlags: Equatable {
    var isOptional = false
    var isReadOnly = false
    var isTransient = false
    var isOrdered = false
    /// `_P` says the property archived no validation predicates, warnings, user info or hash modifier.
    var omitsValidationPredicates = false
    var omitsValidationWarnings = false
    var omitsUserInfo = false
    var omitsVersionHashModifier = false

    /// Bits of `_P`: 0x2 optional, 0x4 read-only, 0x8 transient, 0x10/0x20/0x40/0x80 "no validation
    /// predicates / warnings / user info / hash modifier archived", 0x400 ordered. 0x1 marks the field as
    /// written; 0x100 (indexed by Spotlight), 0x200 (stored in an external record) and 0x800 (cloud
    /// encryption) are Core Data features with no counterpart here.
    init(packed: Int64) {
        isOptional = packed & 0x2 != 0
        isReadOnly = packed & 0x4 != 0
        isTransient = packed & 0x8 != 0
        omitsValidationPredicates = packed & 0x10 != 0
        omitsValidationWarnings = packed & 0x20 != 0
        omitsUserInfo = packed & 0x40 != 0
        omitsVersionHashModifier = packed & 0x80 != 0
        isOrdered = packed & 0x400 != 0
    }

    init() {}

    /// The `_P` bits with no counterpart in this library, for the report of what was not read.
    static let unreadBits: [(bit: Int64, meaning: String)] = [
        (0x100, "indexed by Spotlight"), (0x200, "stored in an external record"), (0x800, "cloud encryption"),
    ]

    /// The `_P` value Core Data's `encodeWithCoder:` builds for these flags (before its subclass hook, which
    /// the attribute and relationship classes do not change as far as the sources show).
    var packed: Int32 {
        var bits: Int32 = 1
        if isOptional { bits |= 0x2 }
        if isReadOnly { bits |= 0x4 }
        if isTransient { bits |= 0x8 }
        if omitsValidationPredicates { bits |= 0x10 }
        if omitsValidationWarnings { bits |= 0x20 }
        if omitsUserInfo { bits |= 0x40 }
        if omitsVersionHashModifier { bits |= 0x80 }
        if isOrdered { bits |= 0x400 }
        return bits
    }
}

/// An attribute's `NSFlagsKey`: 0x1 a maximum is archived (`NSMaxValueName`), 0x2 a minimum
/// (`NSMinValueName`), 0x4 external binary storage, 0x10 preserve the value in history on deletion.
/// 0x8 (backed by a trigger), 0x20 (a file-backed future) and 0x40 (cloud encryption) have no counterpart here.
struct CompiledAttributeFlags: Equatable {
    var hasMaximum = false
    var hasMinimum = false
    var allowsExternalBinaryDataStorage = false
    var preservesValueInHistoryOnDeletion = false
    /// Set bits this library does not read.
    var unreadBits: Int64 = 0

    init(packed: Int64) {
        hasMaximum = packed & 0x1 != 0
        hasMinimum = packed & 0x2 != 0
        allowsExternalBinaryDataStorage = packed & 0x4 != 0
        preservesValueInHistoryOnDeletion = packed & 0x10 != 0
        unreadBits = packed & ~Int64(0x1 | 0x2 | 0x4 | 0x10)
    }

    init() {}

    var packed: Int32 {
        var bits: Int32 = 0
        if hasMaximum { bits |= 0x1 }
        if hasMinimum { bits |= 0x2 }
        if allowsExternalBinaryDataStorage { bits |= 0x4 }
        if preservesValueInHistoryOnDeletion { bits |= 0x10 }
        return bits
    }
}
