// Package host is the host side of the fsplane connector (fsplane connect):
// it dials a hub's WebSocket (docs/connector-protocol.md), announces itself
// with hello, and executes the operations the hub sends through
// internal/ops on the host's own workspace, under the rules the person at
// the host set.
//
// # Contracts
//
//   - The host enforces its mode itself. In read-only mode every operation in
//     proto.WriteOps is refused with code read_only and ReadOnlyMessage,
//     whatever the hub sends; dry runs of edit, edit_lines and patch are
//     allowed because they write nothing. Paths are confined to the
//     workspace roots by internal/workspace (os.Root): absolute paths outside
//     the roots, ".." and symbolic links leading out fail with outside_root.
//   - An operation starts on the goroutine that read it; one that takes
//     longer than a millisecond has reading move on to a new goroutine
//     (connector.Conn.HandOffAfter), and one that finds all
//     MaxConcurrentOps slots taken waits for a slot on a goroutine of its
//     own. Its context is cancelled by the hub's cancel, by the op's
//     timeout_ms (which bounds running the op, not the data transfer a
//     download sends after its result), or by the end of the connection. An operation ended by its
//     context gets no result (the hub has given up on it); every other
//     operation is answered with one result. Results larger than the
//     negotiated message limit move as transfers (connector.Conn.Send).
//   - Operations in flight when the connection ends are dropped, never
//     replayed: the next connection starts with no pending work.
//   - Run reconnects after every failure with exponential backoff and full
//     jitter, capped at 5 s, and re-sends hello each time. Before the first
//     successful connection, failures that retrying cannot fix (the token is
//     refused, the certificate is not trusted, the server does not speak the
//     protocol) end Run with an error instead.
//   - SetMode switches the mode and re-sends hello on the live connection at
//     once; the hub always ends up with the latest mode, because hellos are
//     serialised and each carries the mode current when it is sent.
//
// # Concurrency
//
// A *Host is safe for concurrent use: SetMode, Mode and Status may be
// called from any goroutine while Run runs. Run may be called once.
// Options.OnEvent is called from the host's goroutines, one call at a time
// and in order, and must return promptly: operations wait while it runs.
//
// # Logging
//
// Events report connection state, mode changes, notices and one record per
// operation (time, op, path, result, duration). A failed connection's
// event says why in a few words (Event.Reason, see Reason) beside the
// whole error; the logger gets the whole error as a warning, once while
// it stays the same. Neither events nor the
// logger ever carry file contents or the token.
package host
