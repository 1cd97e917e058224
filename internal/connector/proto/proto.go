// Package proto holds the wire messages of the fsplane connector protocol,
// fsplane-connector/1 (docs/connector-protocol.md): the JSON control
// messages exchanged over the WebSocket between a hub (fsplane serve) and a
// host (fsplane connect), the binary chunk framing, and the reassembly of
// transfers. It is pure: no I/O, no clocks (callers pass the time), so hub,
// host and fuzz tests share exactly the same decoding.
package proto

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/fsplane/fsplane/internal/jsonx"
)

// Protocol is the protocol name, also the WebSocket subprotocol.
const Protocol = "fsplane-connector/1"

// NoHostsRefusal is the body of the 403 a hub without a connector token
// answers every host with. A host recognises it to tell its person that
// the hub, not the token given, needs fixing (no token would do).
const NoHostsRefusal = "this hub accepts no hosts: start fsplane serve with --connector-token (or --api-key)"

// Message types.
const (
	TypeHello          = "hello"
	TypeWelcome        = "welcome"
	TypeOp             = "op"
	TypeResult         = "result"
	TypeCancel         = "cancel"
	TypeTransferStart  = "transfer_start"
	TypeTransferEnd    = "transfer_end"
	TypeTransferAbort  = "transfer_abort"
	TypeTransferCredit = "transfer_credit"
	TypeError          = "error"
)

// Operation names (docs/connector-protocol.md §3).
const (
	OpRead      = "read"
	OpStat      = "stat"
	OpList      = "list"
	OpGrep      = "grep"
	OpSearch    = "search"
	OpWrite     = "write"
	OpEdit      = "edit"
	OpEditLines = "edit_lines"
	OpInsert    = "insert"
	OpPatch     = "patch"
	OpUndo      = "undo"
	// OpDownload streams a file's raw bytes: the host answers a Result
	// (DownloadResult) and then the bytes as a data transfer.
	OpDownload = "download"
)

// KindData marks a transfer of raw bytes (a download), streamed to a
// receiver registered for its op instead of being reassembled.
const KindData = "data"

// WriteOps are the operations a read-only host refuses.
var WriteOps = map[string]bool{OpWrite: true, OpEdit: true, OpEditLines: true, OpInsert: true, OpPatch: true, OpUndo: true}

// Mode is a host's access mode, chosen by the person at the host.
type Mode string

// The modes.
const (
	ReadOnly  Mode = "read_only"
	ReadWrite Mode = "read_write"
)

// Valid reports whether m is a known mode.
func (m Mode) Valid() bool { return m == ReadOnly || m == ReadWrite }

// Capabilities says what a host executes.
type Capabilities struct {
	Ops      []string `json:"ops"`
	Transfer int      `json:"transfer"` // transfer protocol version; 1
	// Features name what a host honours in the args of ops it has
	// executed from the start, where an older host would ignore a new
	// field and do something else than asked (see FeatureUndoHeld).
	Features []string `json:"features,omitempty"`
}

// FeatureUndoHeld: the host's undo is held to what its caller saw: to
// expected_version (it reverts only while the file has that version),
// and to the caller's view of the file (a change it did not read and did
// not make is stale_version). A host without it would ignore both and
// revert the file's newest change, whoever made it, so the hub refuses
// an undo with either instead of sending it.
const FeatureUndoHeld = "undo_held"

// Has reports whether the host announced feature f.
func (c Capabilities) Has(f string) bool { return slices.Contains(c.Features, f) }

// Limits bound messages and transfers; each side obeys the smaller of the
// two peers' values (see Merge).
type Limits struct {
	MaxMessageBytes        int64 `json:"max_message_bytes"`
	MaxTransferBytes       int64 `json:"max_transfer_bytes"`
	MaxConcurrentTransfers int   `json:"max_concurrent_transfers"`
	ChunkBytes             int   `json:"chunk_bytes"`
	// WindowBytes is the flow-control window of data transfers: the bytes
	// a sender may have sent beyond what the receiver granted with
	// transfer_credit. Sent by peers that implement flow control; when
	// either side leaves it out there is none, and a window under
	// MinWindowBytes counts as that (see Negotiate).
	WindowBytes int64 `json:"window_bytes,omitempty"`
}

// DefaultLimits are the protocol's defaults.
var DefaultLimits = Limits{MaxMessageBytes: 1 << 20, MaxTransferBytes: 256 << 20, MaxConcurrentTransfers: 4, ChunkBytes: 256 << 10,
	WindowBytes: 2 << 20}

// Merge returns the smaller of each limit, ignoring unset (zero) values
// and negative ones, which no side can obey: a peer's hello or welcome
// with a negative chunk_bytes crashed the host's next download (a frame
// buffer of negative length), and a negative max_transfer_bytes refused
// every transfer.
func (l Limits) Merge(o Limits) Limits {
	pick64 := func(a, b int64) int64 {
		if a <= 0 || (b > 0 && b < a) {
			return max(b, 0)
		}
		return a
	}
	pick := func(a, b int) int { return int(pick64(int64(a), int64(b))) }
	return Limits{
		MaxMessageBytes:        pick64(l.MaxMessageBytes, o.MaxMessageBytes),
		MaxTransferBytes:       pick64(l.MaxTransferBytes, o.MaxTransferBytes),
		MaxConcurrentTransfers: pick(l.MaxConcurrentTransfers, o.MaxConcurrentTransfers),
		ChunkBytes:             pick(l.ChunkBytes, o.ChunkBytes),
		WindowBytes:            pick64(l.WindowBytes, o.WindowBytes),
	}
}

// MinWindowBytes is the smallest flow-control window: one full chunk of
// the 64 KiB a sender may put in a frame must always fit.
const MinWindowBytes = 64 << 10

// MinChunkBytes is the smallest chunk_bytes: a peer announcing less gets
// chunks of this size. A wrapped message is cut into all its chunks at
// once (Split), so a peer announcing 1 byte had a 256 MiB write cost its
// sender gigabytes of frames, one allocation per byte; and with flow
// control no data chunk is to be under 1 KiB (docs/connector-protocol.md
// §5). Every receiver's read limit holds it.
const MinChunkBytes = 1 << 10

// Negotiate returns the limits both sides of a connection obey, l being
// this side's and peer those of the peer's hello or welcome: the smaller
// of each (see Merge), chunks of at least MinChunkBytes, and flow control
// only when both sides announce a window (a peer that predates it sends
// none, and neither side then waits for or sends credit), of at least
// MinWindowBytes.
func (l Limits) Negotiate(peer Limits) Limits {
	m := l.Merge(peer)
	if m.ChunkBytes > 0 {
		m.ChunkBytes = max(m.ChunkBytes, MinChunkBytes)
	}
	switch {
	case l.WindowBytes <= 0 || peer.WindowBytes <= 0:
		m.WindowBytes = 0
	case m.WindowBytes < MinWindowBytes:
		m.WindowBytes = MinWindowBytes
	}
	return m
}

// OnlyHost is what a caller writes for "the only connected host" where a
// host name goes (the {host} of the hub's /v2/hosts/{host}/… routes).
// No host may take it as its name: that host could be reached by its id
// only.
const OnlyHost = "-"

// CheckName reports why name cannot be a host's name, or nil. A hub also
// refuses a name equal to the id of another connected host (ids route
// first, so that host could not be reached by name).
func CheckName(name string) error {
	switch name {
	case OnlyHost:
		return fmt.Errorf("host name %q is reserved: it addresses the only connected host", OnlyHost)
	case ".", "..":
		// A step of a URL path: clients and the hub's router resolve
		// /v2/hosts/../fs/write to /v2/fs/write, the hub's own files.
		return fmt.Errorf("host name %q is a step of a URL path: /v2/hosts/%s/… leads to another route", name, name)
	}
	return nil
}

// Hello announces a host; it is sent first and again on every mode change.
type Hello struct {
	Type         string       `json:"type"`
	Protocol     string       `json:"protocol"`
	Name         string       `json:"name"`
	Roots        []string     `json:"roots"`
	Mode         Mode         `json:"mode"`
	Capabilities Capabilities `json:"capabilities"`
	Limits       Limits       `json:"limits"`
	Version      string       `json:"version"`
}

// Welcome answers the first Hello.
type Welcome struct {
	Type     string `json:"type"`
	Protocol string `json:"protocol"`
	HostID   string `json:"host_id"`
	Limits   Limits `json:"limits"`
	Version  string `json:"version"`
}

// DownloadRequest is the args of OpDownload.
type DownloadRequest struct {
	Path string
	// Range, when set, asks for one byte range of the file rather than all
	// of it. It is optional and additive: a host from before ranges ignores
	// it and sends the whole file, which its result (no Range) says.
	Range *RangeRequest `json:",omitempty"`
	// Conditional, when set, is the HTTP request's ranges and
	// preconditions; a host that knows it answers from it alone (ignoring
	// Range) and says so with its result's Status. Optional and additive
	// too: a host from before it ignores it, and the hub then decides on
	// the result (see Conditional).
	Conditional *Conditional `json:",omitempty"`
	// Head asks for the result alone (an HTTP HEAD): the host decides the
	// answer as for the download, but sends no bytes and so takes no data
	// slot, which stalled downloads may hold. Optional and additive: a
	// host from before it ignores it and sends the bytes, which a hub
	// that expects none refuses (transfer_abort).
	Head bool `json:",omitempty"`
}

// Check reports arguments no file could make sense of.
func (r *DownloadRequest) Check() error {
	if r.Range != nil {
		if err := r.Range.Check(); err != nil {
			return err
		}
	}
	if r.Conditional != nil {
		return r.Conditional.Check()
	}
	return nil
}

// DownloadResult is the Result of OpDownload, sent before the bytes.
type DownloadResult struct {
	Size    int64 // the whole file's size, whatever part is sent
	Version string
	ModTime time.Time
	// Range is the part of the file the data transfer carries, set only
	// when the request asked for a range (without Conditional) and the
	// host honoured it; absent, the transfer carries the whole file. A
	// Length of 0 means the range cannot be satisfied (it starts at or
	// past the end): no bytes follow.
	Range *ByteRange `json:",omitempty"`
	// Status and Parts are the Outcome the host decided for the request's
	// Conditional (Conditional.Decide); Status is absent when the request
	// had none, or the host predates it. The transfer then carries the
	// whole file for 200, the Parts' bytes one after the other for 206,
	// and nothing otherwise.
	Status int         `json:",omitempty"`
	Parts  []ByteRange `json:",omitempty"`
}

// Op asks the host to run one operation.
type Op struct {
	Type      string          `json:"type"`
	OpID      string          `json:"op_id"`
	Op        string          `json:"op"`
	Path      string          `json:"path"`
	Caller    string          `json:"caller,omitempty"`
	TimeoutMS int64           `json:"timeout_ms,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
}

// Result is an operation's outcome.
type Result struct {
	Type   string          `json:"type"`
	OpID   string          `json:"op_id"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error is a failed operation, in fsplane's stable codes.
type Error struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Hint    string         `json:"hint,omitempty"`
	Details map[string]any `json:"details,omitempty"`
}

// Cancel withdraws an operation (it timed out at the hub).
type Cancel struct {
	Type string `json:"type"`
	OpID string `json:"op_id"`
}

// TransferStart begins a transfer of one large message.
type TransferStart struct {
	Type       string `json:"type"`
	TransferID uint32 `json:"transfer_id"`
	OpID       string `json:"op_id"`
	Kind       string `json:"kind"` // the wrapped message's type: op or result
	TotalBytes int64  `json:"total_bytes"`
	SHA256     string `json:"sha256"`
}

// TransferEnd completes a transfer. A data transfer, whose digest is only
// known once streamed, carries it here.
type TransferEnd struct {
	Type       string `json:"type"`
	TransferID uint32 `json:"transfer_id"`
	SHA256     string `json:"sha256,omitempty"`
}

// TransferCredit lets the sender of data transfer TransferID send Bytes
// more bytes: the receiver sends it as its consumer takes the data, so a
// slow consumer slows only its own transfer (flow control, negotiated with
// Limits.WindowBytes).
type TransferCredit struct {
	Type       string `json:"type"`
	TransferID uint32 `json:"transfer_id"`
	OpID       string `json:"op_id,omitempty"`
	Bytes      int64  `json:"bytes"`
}

// TransferAbort discards a transfer.
type TransferAbort struct {
	Type       string `json:"type"`
	TransferID uint32 `json:"transfer_id"`
	OpID       string `json:"op_id,omitempty"`
	Reason     string `json:"reason"`
}

// ErrorMsg reports a problem with a message rather than an operation.
type ErrorMsg struct {
	Type    string         `json:"type"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// ErrUnknownType is returned (wrapped) by Decode for a message type this
// version does not know; peers answer it with an ErrorMsg and go on.
var ErrUnknownType = errors.New("unknown message type")

// wire holds every field of every message type, so a frame is parsed
// once (big results and ops carry kilobytes of JSON; each pass counts).
// Field names that several types share have the same meaning in each.
type wire struct {
	Type         string          `json:"type"`
	Protocol     string          `json:"protocol"`
	Name         string          `json:"name"`
	Roots        []string        `json:"roots"`
	Mode         Mode            `json:"mode"`
	Capabilities Capabilities    `json:"capabilities"`
	Limits       Limits          `json:"limits"`
	Version      string          `json:"version"`
	HostID       string          `json:"host_id"`
	OpID         string          `json:"op_id"`
	Op           string          `json:"op"`
	Path         string          `json:"path"`
	Caller       string          `json:"caller"`
	TimeoutMS    int64           `json:"timeout_ms"`
	Args         json.RawMessage `json:"args"`
	OK           bool            `json:"ok"`
	Result       json.RawMessage `json:"result"`
	Error        json.RawMessage `json:"error"`
	TransferID   uint32          `json:"transfer_id"`
	Kind         string          `json:"kind"`
	TotalBytes   int64           `json:"total_bytes"`
	SHA256       string          `json:"sha256"`
	Reason       string          `json:"reason"`
	Bytes        int64           `json:"bytes"`
	Code         string          `json:"code"`
	Message      string          `json:"message"`
	Details      map[string]any  `json:"details"`
}

// Decode parses one text frame into its message type (*Hello, *Op, …),
// checking the fields every message of that type must have.
func Decode(frame []byte) (any, error) {
	if r, ok := decodeResult(frame); ok {
		if err := validate(r); err != nil {
			return nil, fmt.Errorf("connector: invalid %s message: %w", TypeResult, err)
		}
		return r, nil
	}
	return decodeWire(frame)
}

// decodeWire is Decode's general path: every message type, any valid
// spelling.
func decodeWire(frame []byte) (any, error) {
	// decodeResult's scanner bounds its own depth; segmentio does not.
	if !jsonx.DepthOK(frame) {
		return nil, fmt.Errorf("connector: malformed message: JSON nests deeper than %d arrays or objects", jsonx.MaxDepth)
	}
	var w wire
	if err := json.Unmarshal(frame, &w); err != nil {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(frame, &head) == nil && head.Type != "" {
			return nil, fmt.Errorf("connector: malformed %s message: %w", head.Type, err)
		}
		return nil, fmt.Errorf("connector: malformed message: %w", err)
	}
	var msg any
	switch w.Type {
	case TypeHello:
		msg = &Hello{Type: w.Type, Protocol: w.Protocol, Name: w.Name, Roots: w.Roots, Mode: w.Mode,
			Capabilities: w.Capabilities, Limits: w.Limits, Version: w.Version}
	case TypeWelcome:
		msg = &Welcome{Type: w.Type, Protocol: w.Protocol, HostID: w.HostID, Limits: w.Limits, Version: w.Version}
	case TypeOp:
		msg = &Op{Type: w.Type, OpID: w.OpID, Op: w.Op, Path: w.Path, Caller: w.Caller, TimeoutMS: w.TimeoutMS, Args: w.Args}
	case TypeResult:
		r := &Result{Type: w.Type, OpID: w.OpID, OK: w.OK, Result: w.Result}
		if len(w.Error) > 0 && string(w.Error) != "null" {
			r.Error = &Error{}
			if err := json.Unmarshal(w.Error, r.Error); err != nil {
				return nil, fmt.Errorf("connector: malformed result message: %w", err)
			}
		}
		msg = r
	case TypeCancel:
		msg = &Cancel{Type: w.Type, OpID: w.OpID}
	case TypeTransferStart:
		msg = &TransferStart{Type: w.Type, TransferID: w.TransferID, OpID: w.OpID, Kind: w.Kind, TotalBytes: w.TotalBytes, SHA256: w.SHA256}
	case TypeTransferEnd:
		msg = &TransferEnd{Type: w.Type, TransferID: w.TransferID, SHA256: w.SHA256}
	case TypeTransferCredit:
		msg = &TransferCredit{Type: w.Type, TransferID: w.TransferID, OpID: w.OpID, Bytes: w.Bytes}
	case TypeTransferAbort:
		msg = &TransferAbort{Type: w.Type, TransferID: w.TransferID, OpID: w.OpID, Reason: w.Reason}
	case TypeError:
		msg = &ErrorMsg{Type: w.Type, Code: w.Code, Message: w.Message, Details: w.Details}
	default:
		return nil, fmt.Errorf("connector: %w %q", ErrUnknownType, w.Type)
	}
	if err := validate(msg); err != nil {
		return nil, fmt.Errorf("connector: invalid %s message: %w", w.Type, err)
	}
	return msg, nil
}

// decodeResult decodes a result as encodeResult writes it (the message a
// hub reads most, often carrying kilobytes of file text) with jsonx's
// scanner: segmentio/encoding/json walks an escaped string byte by byte,
// once to find where the raw result ends and again when the hub decodes
// it. Any other shape (another type, an unknown or oddly spelled key, a
// null) reports false and takes the general path, which decides.
func decodeResult(frame []byte) (*Result, bool) {
	r := &Result{}
	var errRaw []byte
	ok := jsonx.Members(frame, func(key, v []byte) bool {
		var ok bool
		switch string(key) {
		case `"type"`:
			r.Type, ok = jsonx.String(v)
			return ok && r.Type == TypeResult
		case `"op_id"`:
			r.OpID, ok = jsonx.String(v)
		case `"ok"`:
			r.OK, ok = jsonx.Bool(v)
		case `"result"`:
			// The frame's buffer is reused for the next one.
			r.Result, ok = append(json.RawMessage(nil), v...), true
		case `"error"`:
			errRaw, ok = v, true
		}
		return ok
	})
	if !ok || r.Type != TypeResult {
		return nil, false
	}
	if len(errRaw) > 0 && string(errRaw) != "null" {
		r.Error = &Error{}
		if json.Unmarshal(errRaw, r.Error) != nil {
			return nil, false
		}
	}
	return r, true
}

func validate(msg any) error {
	switch m := msg.(type) {
	case *Hello:
		if m.Protocol != Protocol {
			return fmt.Errorf("protocol %q, want %q", m.Protocol, Protocol)
		}
		if m.Name == "" || len(m.Roots) == 0 || !m.Mode.Valid() {
			return errors.New("needs name, roots and mode read_only or read_write")
		}
	case *Welcome:
		if m.HostID == "" {
			return errors.New("needs host_id")
		}
	case *Op:
		if m.OpID == "" || m.Op == "" {
			return errors.New("needs op_id and op")
		}
	case *Result:
		if m.OpID == "" {
			return errors.New("needs op_id")
		}
		if !m.OK && m.Error == nil {
			return errors.New("a failed result needs error")
		}
	case *Cancel:
		if m.OpID == "" {
			return errors.New("needs op_id")
		}
	case *TransferStart:
		if m.Kind != TypeOp && m.Kind != TypeResult && m.Kind != KindData {
			return fmt.Errorf("kind %q, want op, result or data", m.Kind)
		}
		if m.TotalBytes < 0 || (m.Kind != KindData && len(m.SHA256) != 64) {
			return errors.New("needs total_bytes >= 0 and a 64-hex sha256")
		}
		if m.Kind == KindData && m.OpID == "" {
			return errors.New("a data transfer needs op_id")
		}
	case *TransferEnd:
		if m.SHA256 != "" && len(m.SHA256) != 64 {
			return errors.New("sha256 must be 64 hex digits")
		}
	case *TransferCredit:
		if m.Bytes <= 0 {
			return errors.New("needs bytes > 0")
		}
	}
	return nil
}

// Encode renders msg (one of this package's message types) as a text
// frame, setting its type field.
func Encode(msg any) ([]byte, error) { return AppendEncode(nil, msg) }

// AppendEncode is Encode appending to dst, so a sender can reuse its frame
// buffers (a read result is mostly file text: a fresh buffer per result
// is the bulk of what a host allocates).
func AppendEncode(dst []byte, msg any) ([]byte, error) {
	switch m := msg.(type) {
	case *Hello:
		m.Type, m.Protocol = TypeHello, Protocol
	case *Welcome:
		m.Type, m.Protocol = TypeWelcome, Protocol
	case *Op:
		m.Type = TypeOp
		return encodeOp(dst, m)
	case *Result:
		m.Type = TypeResult
		return encodeResult(dst, m)
	case *Cancel:
		m.Type = TypeCancel
	case *TransferStart:
		m.Type = TypeTransferStart
	case *TransferEnd:
		m.Type = TypeTransferEnd
	case *TransferCredit:
		m.Type = TypeTransferCredit
	case *TransferAbort:
		m.Type = TypeTransferAbort
	case *ErrorMsg:
		m.Type = TypeError
	default:
		return nil, fmt.Errorf("connector: cannot encode %T", msg)
	}
	return json.Append(dst, msg, json.EscapeHTML|json.SortMapKeys)
}

// encodeOp and encodeResult write the two hot messages by hand: json.Marshal
// would re-validate and compact their raw args and result, a second pass
// over what is often the whole payload. The raw parts must be valid JSON
// (they come from json.Marshal).
func encodeOp(b []byte, m *Op) ([]byte, error) {
	b = slices.Grow(b, 96+len(m.OpID)+len(m.Path)+len(m.Args))
	b = append(b, `{"type":"op","op_id":`...)
	b = appendString(b, m.OpID)
	b = append(b, `,"op":`...)
	b = appendString(b, m.Op)
	b = append(b, `,"path":`...)
	b = appendString(b, m.Path)
	if m.Caller != "" {
		b = append(b, `,"caller":`...)
		b = appendString(b, m.Caller)
	}
	if m.TimeoutMS != 0 {
		b = append(b, `,"timeout_ms":`...)
		b = strconv.AppendInt(b, m.TimeoutMS, 10)
	}
	if len(m.Args) > 0 {
		b = append(b, `,"args":`...)
		b = append(b, m.Args...)
	}
	return append(b, '}'), nil
}

func encodeResult(b []byte, m *Result) ([]byte, error) {
	b = slices.Grow(b, 64+len(m.OpID)+len(m.Result))
	b = append(b, `{"type":"result","op_id":`...)
	b = appendString(b, m.OpID)
	b = append(b, `,"ok":`...)
	b = strconv.AppendBool(b, m.OK)
	if len(m.Result) > 0 {
		b = append(b, `,"result":`...)
		b = append(b, m.Result...)
	}
	if m.Error != nil {
		e, err := json.Marshal(m.Error)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"error":`...)
		b = append(b, e...)
	}
	return append(b, '}'), nil
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte { return jsonx.AppendString(b, s) }
