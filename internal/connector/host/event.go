package host

import (
	"time"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// State is the state of the host's connection to its hub.
type State int

// The connection states, in the order a host usually passes through them.
const (
	// Connecting: dialling the hub, or waiting for its welcome.
	Connecting State = iota + 1
	// Connected: welcomed; Status.HostID is the id the hub assigned.
	Connected
	// Reconnecting: the last attempt or connection failed; the next
	// attempt starts after Event.Retry.
	Reconnecting
	// Failed: Run is returning with an error (Event.Err) that retrying
	// cannot fix.
	Failed
	// Stopped: Run is returning because its context ended.
	Stopped
)

func (s State) String() string {
	switch s {
	case Connecting:
		return "connecting"
	case Connected:
		return "connected"
	case Reconnecting:
		return "reconnecting"
	case Failed:
		return "failed"
	case Stopped:
		return "stopped"
	}
	return "unknown"
}

// EventKind says which fields of an Event are set.
type EventKind int

// The kinds of events.
const (
	// EventState: the connection state changed (State, HostID, Retry,
	// Reason, Err).
	EventState EventKind = iota + 1
	// EventMode: the mode changed (Mode); hello was re-sent when connected.
	EventMode
	// EventOp: one operation finished (Op).
	EventOp
	// EventNotice: something worth telling the person (Message), such as an
	// error message or an aborted transfer from the hub.
	EventNotice
)

// Event is one thing that happened at the host, for a TUI or a log.
type Event struct {
	Time time.Time
	Kind EventKind

	State  State
	HostID string        // Connected
	Retry  time.Duration // Reconnecting: the wait before the next attempt
	// Reason (Reconnecting, Failed) is what went wrong in a few words
	// (see Reason), for a status line or a log line; Err is the whole
	// error, whose cause the network library's wrapping buries at its
	// end, for a diagnostic log.
	Reason string
	Err    string

	Mode proto.Mode // EventMode; on state events, the mode in force

	Op *OpRecord // EventOp

	Message string // EventNotice
}

// Results of an operation other than "ok" and an error code.
const (
	ResultOK        = "ok"
	ResultCancelled = "cancelled" // the hub sent cancel
	ResultTimeout   = "timeout"   // the op's timeout_ms passed
	ResultDropped   = "dropped"   // the connection ended first
)

// OpRecord is the log record of one operation. It never holds file
// contents.
type OpRecord struct {
	ID       string
	Op       string
	Path     string // as the hub named it; "" for a multi-file patch
	Result   string // ResultOK, an error code (fserr), or ResultCancelled, ResultTimeout, ResultDropped
	Duration time.Duration
	// Delivered is false when the result could not be sent (the connection
	// ended) or was not meant to be (the op was cancelled).
	Delivered bool
}

// Status is a snapshot of the host's state.
type Status struct {
	State  State
	HostID string
	Mode   proto.Mode
	Reason string // as Event.Reason
	Err    string
}
