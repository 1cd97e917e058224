package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/jsonx"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/transfer"
)

// ReadOnlyMessage is the message of every write a read-only host refuses.
const ReadOnlyMessage = "Writes are disabled on this host. Press F3 to switch to Read&Write."

// Ops lists the operations a host executes, as advertised in hello.
var Ops = []string{
	proto.OpRead, proto.OpStat, proto.OpList, proto.OpGrep, proto.OpSearch,
	proto.OpWrite, proto.OpEdit, proto.OpEditLines, proto.OpInsert, proto.OpPatch, proto.OpUndo,
	proto.OpDownload,
}

// Features are the proto.Capabilities features this host honours.
var Features = []string{proto.FeatureUndoHeld}

// call is an operation decoded and ready to run.
type call struct {
	dryRun bool // the op writes nothing (a dry run of edit, edit_lines or patch)
	run    func(context.Context) (any, error)
	// after, when set, runs once run succeeded: stream is called after the
	// result was sent (a download's bytes), release when it was not.
	after *followUp
}

// followUp is the second half of an operation whose result is followed by
// a data transfer.
type followUp struct {
	stream  func(ctx context.Context, conn *connector.Conn, opID string) error
	release func()
}

// decodeArgs decodes op's args (none: req as it is) into req.
func decodeArgs(op *proto.Op, req any) error {
	if len(op.Args) == 0 {
		return nil
	}
	if err := json.Unmarshal(op.Args, req); err != nil {
		return badArgs(op, err)
	}
	return nil
}

// badArgs is the refusal of op's args for err.
func badArgs(op *proto.Op, err error) error {
	return fserr.New(fserr.BadRequest, op.Op, op.Path, "invalid args for %s: %v", op.Op, err)
}

// bind decodes args into the op's request type, lets fill set the fields
// the op message owns (path, caller), and binds the engine method.
func bind[Req, Res any](op *proto.Op, fill func(*Req), dry func(*Req) bool, f func(context.Context, Req) (*Res, error)) (call, error) {
	var req Req
	if err := decodeArgs(op, &req); err != nil {
		return call{}, err
	}
	if fill != nil {
		fill(&req)
	}
	c := call{run: func(ctx context.Context) (any, error) {
		res, err := f(ctx, req)
		if err != nil {
			return nil, err
		}
		return res, nil
	}}
	if dry != nil {
		c.dryRun = dry(&req)
	}
	return c, nil
}

// prepare decodes an op into a call on e. The op's path is authoritative
// and its caller identifies the agent context for freshness
// (docs/connector-protocol.md §2, §3).
//
// The host alone decides who owns the files it creates and their
// permissions: a write's User and Mode are cleared, so a new file and its
// new parents belong to the user running the host, with the permissions a
// local write gives (0644 for a file, 0755 less the umask for a
// directory). A hub could otherwise have a host running as root create
// files owned by anyone, or world-writable and setuid ones.
func prepare(e *ops.Engine, op *proto.Op) (call, error) {
	p, caller := op.Path, op.Caller
	switch op.Op {
	case proto.OpRead:
		return bind(op, func(r *ops.ReadRequest) { r.Path, r.Caller = p, caller }, nil, e.Read)
	case proto.OpStat:
		return bind(op, func(r *ops.StatRequest) { r.Path = p }, nil, e.Stat)
	case proto.OpList:
		return bind(op, func(r *ops.ListRequest) { r.Path = p }, nil, e.List)
	case proto.OpGrep:
		return bind(op, func(r *ops.GrepRequest) { r.Path = p }, nil, e.Grep)
	case proto.OpSearch:
		return bind(op, func(r *ops.FindRequest) { r.Path = p }, nil, e.Find)
	case proto.OpWrite:
		return bind(op, func(r *ops.WriteRequest) {
			r.Path, r.Caller = p, caller
			r.User, r.Mode = "", 0
		}, nil, e.Write)
	case proto.OpEdit:
		return bind(op, func(r *ops.EditRequest) { r.Path, r.Caller = p, caller },
			func(r *ops.EditRequest) bool { return r.DryRun }, e.Edit)
	case proto.OpEditLines:
		return bind(op, func(r *ops.EditLinesRequest) { r.Path, r.Caller = p, caller },
			func(r *ops.EditLinesRequest) bool { return r.DryRun }, e.EditLines)
	case proto.OpInsert:
		return bind(op, func(r *ops.InsertRequest) { r.Path, r.Caller = p, caller }, nil, e.Insert)
	case proto.OpPatch:
		return bind(op, func(r *ops.PatchRequest) { r.Path, r.Caller = p, caller },
			func(r *ops.PatchRequest) bool { return r.DryRun }, e.Patch)
	case proto.OpUndo:
		return bind(op, func(r *ops.UndoRequest) { r.Path, r.Caller = p, caller }, nil, e.Undo)
	case proto.OpDownload:
		var req proto.DownloadRequest
		if err := decodeArgs(op, &req); err != nil {
			return call{}, err
		}
		if err := req.Check(); err != nil {
			return call{}, badArgs(op, err)
		}
		return download(e, p, req), nil
	}
	return call{}, fserr.New(fserr.BadRequest, op.Op, op.Path, "unknown op: %s", op.Op).
		WithHint("this host executes %v", Ops)
}

// download opens the file for a download: the result carries its size,
// version and time, and what is sent: with a Conditional, the outcome it
// decides on the opened file (proto.Conditional.Decide); with a single
// Range, the part it resolves to (proto.RangeRequest.Part); else the whole
// file. Those bytes follow as a data transfer, read from the descriptor
// the result describes (transfer.Source.Sections: several parts are one
// state of the file, or the transfer fails). A transfer over the
// connection's limit is refused with too_large before the result: once
// the hub has the result it starts its answer (an HTTP 200 or 206 with the
// size), and the bytes could then only be cut off. The limit is on what is
// sent, so a file over it can still be fetched a range at a time. With
// Head, the result is all: no bytes follow, and no data slot is taken.
func download(e *ops.Engine, p string, req proto.DownloadRequest) call {
	var src *transfer.Source
	var parts []transfer.Span
	var n int64
	var slot func() // the data slot reserved before the result (nil: none)
	f := &followUp{
		stream: func(ctx context.Context, conn *connector.Conn, opID string) error {
			defer src.Close()
			if slot != nil {
				return conn.SendDataReserved(ctx, opID, src.Sections(parts), n, slot)
			}
			return conn.SendData(ctx, opID, src.Sections(parts), n)
		},
		release: func() {
			src.Close()
			if slot != nil {
				slot()
			}
		},
	}
	c := call{after: f}
	if req.Head {
		c.after = nil
	}
	c.run = func(ctx context.Context) (any, error) {
		s, err := e.OpenDownload(ctx, p)
		if err != nil {
			return nil, err
		}
		res := proto.DownloadResult{Size: s.Size(), Version: s.Version(), ModTime: s.ModTime()}
		whole := []transfer.Span{{Offset: 0, Length: s.Size()}}
		switch {
		case req.Conditional != nil:
			out := req.Conditional.Decide(s.Size(), s.Version(), s.ModTime())
			res.Status, res.Parts = out.Status, out.Parts
			switch out.Status {
			case http.StatusOK:
				parts = whole
			case http.StatusPartialContent:
				parts = make([]transfer.Span, len(out.Parts))
				for i, b := range out.Parts {
					parts[i] = transfer.Span(b)
				}
			}
		case req.Range != nil:
			parts = whole
			if part, ok := req.Range.Part(s.Size(), s.Version(), s.ModTime()); ok {
				parts, res.Range = []transfer.Span{transfer.Span(part)}, &part
			}
		default:
			parts = whole
		}
		n = span(parts)
		if limit := transferLimit(ctx); n > limit {
			s.Close()
			what := fmt.Sprintf("the file is %d bytes", s.Size())
			if n != s.Size() || len(parts) != 1 || parts[0].Offset != 0 {
				what = fmt.Sprintf("the ranges asked are %d bytes", n)
			}
			return nil, fserr.New(fserr.TooLarge, proto.OpDownload, p, "%s; a download from a host is at most %d bytes", what, limit).
				WithHint("download it a range at a time (HTTP Range), split the file on the host, or copy it another way")
		}
		if req.Head {
			s.Close()
			return res, nil
		}
		if conn, ok := ctx.Value(connKey{}).(*connector.Conn); ok && n > 0 {
			// The slot is taken before the result, which starts the
			// hub's answer (200 and the size): a download that finds
			// none is refused as busy, not answered and then cut. An
			// answer with no bytes (304, 412, 416, an empty file) needs
			// none: its transfer, empty, takes no slot (see
			// connector.SendData), and the hub answers it from the result
			// and that transfer's end.
			var rel func()
			if rel, err = conn.ReserveData(ctx, downloadSlotWait); err != nil {
				s.Close()
				if errors.Is(err, connector.ErrBusy) {
					e := fserr.New(fserr.Busy, proto.OpDownload, p,
						"host is already sending as many downloads as it may at once; this download was not started").
						WithHint("retry when one of them finishes (a client that stops reading is cut after 30 s)")
					e.Retryable = true
					return nil, e
				}
				return nil, err
			}
			slot = sync.OnceFunc(rel)
		}
		src = s
		return res, nil
	}
	return c
}

// downloadSlotWait bounds how long a download waits for a data slot
// before its result: shorter than the hub's default op timeout (30 s),
// so that the caller hears "busy", not a timeout.
const downloadSlotWait = 5 * time.Second

// span is the number of bytes in parts.
func span(parts []transfer.Span) int64 {
	var n int64
	for _, p := range parts {
		n += p.Length
	}
	return n
}

// connKey carries a session's Conn in the context of its operations, for
// the limits negotiated with the hub.
type connKey struct{}

// withConn returns ctx carrying conn (see transferLimit).
func withConn(ctx context.Context, conn *connector.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, conn)
}

// transferLimit is the largest transfer the connection an operation runs
// for carries: the smaller of the host's and the hub's max_transfer_bytes.
func transferLimit(ctx context.Context) int64 {
	if c, ok := ctx.Value(connKey{}).(*connector.Conn); ok {
		return c.Limits().MaxTransferBytes
	}
	return proto.DefaultLimits.MaxTransferBytes
}

// refused reports whether mode forbids c: a write (not a dry run) on a
// read-only host.
func refused(mode proto.Mode, op string, c call) bool {
	return mode != proto.ReadWrite && proto.WriteOps[op] && !c.dryRun
}

// execute runs one op under mode and returns its result message, or the
// error that ended it. It never panics: a panic in an operation becomes an
// io_error result (and the stack goes to the logger via onPanic).
func execute(ctx context.Context, e *ops.Engine, mode proto.Mode, op *proto.Op, onPanic func(any, []byte)) (res *proto.Result, after *followUp, err error) {
	var (
		c   call
		ran bool // c.run succeeded: what c.after holds (a file, a data slot) is to be released if no result goes out
	)
	defer func() {
		if r := recover(); r != nil {
			onPanic(r, debug.Stack())
			if ran && c.after != nil {
				c.after.release()
			}
			res, after, err = nil, nil, fserr.New(fserr.IOError, op.Op, op.Path, "internal error in %s", op.Op)
		}
	}()
	c, err = prepare(e, op)
	if err != nil {
		return nil, nil, err
	}
	if refused(mode, op.Op, c) {
		return nil, nil, fserr.New(fserr.ReadOnly, op.Op, op.Path, "%s", ReadOnlyMessage)
	}
	if err := ctx.Err(); err != nil { // cancelled while waiting for a slot
		return nil, nil, err
	}
	out, err := c.run(ctx)
	if err != nil {
		return nil, nil, err
	}
	ran = true
	// No HTML escaping: it would spend six bytes, and a \u escape the hub
	// must decode, on every <, > and & of the file text results carry.
	var b []byte
	if r, ok := out.(*ops.ReadResult); ok {
		b = appendReadResult(resultBuf(), r)
	} else {
		b, err = json.Append(resultBuf(), out, json.SortMapKeys)
	}
	if err != nil {
		if c.after != nil {
			c.after.release()
		}
		return nil, nil, fserr.New(fserr.IOError, op.Op, op.Path, "cannot encode the %s result: %v", op.Op, err)
	}
	return &proto.Result{OpID: op.OpID, OK: true, Result: b}, c.after, nil
}

// appendReadResult writes r as json.Append does (a test holds the bytes
// equal), with jsonx.AppendString for the text: segmentio/encoding/json
// escapes a string byte by byte from its first escape on, and file text
// has a line break every few dozen bytes.
func appendReadResult(b []byte, r *ops.ReadResult) []byte {
	b = append(b, `{"Path":`...)
	b = jsonx.AppendString(b, r.Path)
	b = append(b, `,"Content":`...)
	b = jsonx.AppendString(b, r.Content)
	b = append(b, `,"Version":`...)
	b = jsonx.AppendString(b, r.Version)
	b = append(b, `,"TotalLines":`...)
	b = strconv.AppendInt(b, int64(r.TotalLines), 10)
	b = append(b, `,"LineFrom":`...)
	b = strconv.AppendInt(b, int64(r.LineFrom), 10)
	b = append(b, `,"LineTo":`...)
	b = strconv.AppendInt(b, int64(r.LineTo), 10)
	b = append(b, `,"Size":`...)
	b = strconv.AppendInt(b, r.Size, 10)
	b = append(b, `,"BOM":`...)
	b = strconv.AppendBool(b, r.BOM)
	b = append(b, `,"EOL":`...)
	b = jsonx.AppendString(b, r.EOL)
	return append(b, '}')
}

// resultBufs recycles the buffers results are encoded into: grown from
// nothing, the buffer of a 4 KiB read's result was reallocated a dozen
// times, two thirds of the 18 µs its encoding took.
var resultBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxPooledResult bounds the buffers kept: a rare large result does not
// pin its memory in the pool.
const maxPooledResult = 1 << 20

func resultBuf() []byte { return (*resultBufs.Get().(*[]byte))[:0] }

// recycleResult returns res's encoding to the pool once it was sent:
// Conn.Send copies a message into its frame and keeps nothing of it.
func recycleResult(res *proto.Result) {
	if b := []byte(res.Result); cap(b) > 0 && cap(b) <= maxPooledResult {
		b = b[:0]
		res.Result = nil
		resultBufs.Put(&b)
	}
}

// wireError maps an operation's error to the protocol's error object: the
// stable code, the message and hint written for the caller, and the
// details (errno, errno_name, retryable, lines). Never the cause's raw
// text.
func wireError(op, path string, err error) *proto.Error {
	e := fserr.From(op, path, err)
	w := &proto.Error{Code: string(e.Code), Message: e.Message, Hint: e.Hint}
	d := map[string]any{}
	if e.Errno != 0 {
		d["errno"] = int(e.Errno)
		d["errno_name"] = e.ErrnoName()
	}
	if e.Retryable {
		d["retryable"] = true
	}
	if len(e.Lines) > 0 {
		d["lines"] = e.Lines
	}
	if len(d) > 0 {
		w.Details = d
	}
	return w
}

// Causes of an operation's context ending; ctxResult turns them into
// OpRecord results.
var (
	errCancelled    = errors.New("cancelled by the hub")
	errTimeout      = errors.New("the operation's timeout passed")
	errDisconnected = errors.New("the connection to the hub ended")
)

// ctxResult names why ctx ended an operation that failed, or "" when ctx
// is still live (the failure is the operation's own). An operation that
// fails after its context ended is taken to have been ended by it: ops
// report cancellation in their own words (search cancelled: ...).
func ctxResult(ctx context.Context, err error) string {
	if err == nil || ctx.Err() == nil {
		return ""
	}
	switch context.Cause(ctx) {
	case errCancelled:
		return ResultCancelled
	case errTimeout:
		return ResultTimeout
	}
	return ResultDropped
}

// errString renders a panic value without assuming its type.
func errString(v any) string { return fmt.Sprint(v) }
