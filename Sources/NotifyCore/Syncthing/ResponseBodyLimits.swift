/// The largest response body, in bytes, the helper accepts from each server; a larger body (by `Content-Length` or
/// by the bytes that come) aborts the transfer (`ErrorCode.bodyTooLarge`), never a partial parse.
package enum ResponseBodyLimits {
    /// Syncthing's `/rest/events` (the long-poll and the head read): 16 MiB. A long-poll may return every event
    /// since the cursor, and a busy folder's batch is large.
    package static let syncthingEvents = 16 << 20

    /// Syncthing's lists (`/rest/config/devices`, `/rest/config/folders`, `/rest/system/connections`): 4 MiB, one
    /// entry per device or folder.
    package static let syncthingLists = 4 << 20

    /// Any other Syncthing answer (`/rest/system/status`, the completion, the version; the healthcheck's status
    /// read): 1 MiB. Each is one small object.
    package static let syncthing = 1 << 20

    /// The relay's answers (the health check, a trigger): 64 KiB. Each is one small object, from across the
    /// internet.
    package static let relay = 64 << 10
}
