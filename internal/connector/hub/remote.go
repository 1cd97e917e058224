package hub

import (
	"context"
	"unicode/utf8"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/jsonx"
	"github.com/fsplane/fsplane/internal/ops"
)

// Remote runs fsplane operations on one connected host: the same methods,
// requests and results as the local *ops.Engine, so fronts serve local and
// remote files with the same code. Freshness is the host's, per caller.
type Remote struct {
	host *Host
}

// Remote returns the engine of the named host (see Find for routing).
func (h *Hub) Remote(name string) (*Remote, error) {
	x, err := h.Find(name)
	if err != nil {
		return nil, err
	}
	return &Remote{host: x}, nil
}

// Host returns the host this engine reaches.
func (r *Remote) Host() *Host { return r.host }

func call[Res any](ctx context.Context, r *Remote, op, path, caller string, req any) (*Res, error) {
	var out Res
	if err := r.host.Call(ctx, op, path, caller, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Read runs ops.Engine.Read on the host.
func (r *Remote) Read(ctx context.Context, req ops.ReadRequest) (*ops.ReadResult, error) {
	res, err := call[readResult](ctx, r, proto.OpRead, req.Path, req.Caller, req)
	if err != nil {
		return nil, err
	}
	res.ReadResult.Content = string(res.Content)
	return &res.ReadResult, nil
}

// ReadQuoted is Read for fronts that write the text into JSON themselves:
// quoted is the text as the JSON string literal the host sent, checked (a
// valid literal of valid UTF-8) but neither decoded nor escaped again, and
// res.Content is empty. On a large read that is most of the hub's work.
// When the host's result took the general decoder, quoted is nil and
// res.Content holds the text.
func (r *Remote) ReadQuoted(ctx context.Context, req ops.ReadRequest) (res *ops.ReadResult, quoted []byte, err error) {
	out, err := call[quotedReadResult](ctx, r, proto.OpRead, req.Path, req.Caller, req)
	if err != nil {
		return nil, nil, err
	}
	if out.quoted == nil {
		out.ReadResult.Content = string(out.Content)
	}
	return &out.ReadResult, out.quoted, nil
}

// readResult decodes ops.ReadResult with its content as text (the
// shallower Content field is the one decoded).
type readResult struct {
	ops.ReadResult
	Content text
}

// decodeFast decodes the result as the host writes it with jsonx's
// scanner (see proto.Decode's fast path: the text is the bulk of it). Any
// other key, or a value of another type, reports false, leaving r zero for
// the general decoder.
func (r *readResult) decodeFast(raw []byte) bool { return decodeRead(raw, r, nil) }

// quotedReadResult is a read result whose text is kept as the JSON string
// literal the host sent (see Remote.ReadQuoted); the general decoder
// decodes the text into readResult instead.
type quotedReadResult struct {
	readResult
	quoted []byte
}

func (q *quotedReadResult) decodeFast(raw []byte) bool {
	if !decodeRead(raw, &q.readResult, &q.quoted) {
		q.quoted = nil
		return false
	}
	return true
}

// decodeRead decodes a read result into r; with quoted, the text is not
// decoded but checked (a valid literal of valid UTF-8) and left in
// *quoted. On false r is zero.
func decodeRead(raw []byte, r *readResult, quoted *[]byte) bool {
	ok := jsonx.Fields(raw, func(key []byte, i int) (int, bool) {
		var str *string
		switch string(key) {
		case `"Path"`:
			str = &r.Path
		case `"Content"`:
			if quoted != nil {
				end, _, ok := jsonx.ScanString(raw, i)
				if !ok || !utf8.Valid(raw[i:end]) {
					return 0, false
				}
				*quoted = raw[i:end]
				return end, true
			}
			s, end, ok := jsonx.DecodeString(raw, i) // checked and decoded in one pass
			r.Content = text(s)
			return end, ok
		case `"Version"`:
			str = &r.Version
		case `"EOL"`:
			str = &r.EOL
		}
		if str != nil {
			var end int
			var ok bool
			*str, end, ok = jsonx.DecodeString(raw, i)
			return end, ok
		}
		end, ok := jsonx.ScanValue(raw, i)
		if !ok {
			return 0, false
		}
		v := raw[i:end]
		switch string(key) {
		case `"TotalLines"`:
			r.TotalLines, ok = intOf(v)
		case `"LineFrom"`:
			r.LineFrom, ok = intOf(v)
		case `"LineTo"`:
			r.LineTo, ok = intOf(v)
		case `"Size"`:
			r.Size, ok = jsonx.Int(v)
		case `"BOM"`:
			r.BOM, ok = jsonx.Bool(v)
		default:
			ok = false
		}
		return end, ok
	})
	if !ok {
		*r = readResult{}
	}
	return ok
}

// intOf decodes a JSON number into an int field, refusing what does not
// fit (as the general decoder does).
func intOf(v []byte) (int, bool) {
	n, ok := jsonx.Int(v)
	return int(n), ok && int64(int(n)) == n
}

// fastDecoder is a result type with a decoder for the shape hosts write.
type fastDecoder interface{ decodeFast(raw []byte) bool }

// Write runs ops.Engine.Write on the host.
func (r *Remote) Write(ctx context.Context, req ops.WriteRequest) (*ops.WriteResult, error) {
	return call[ops.WriteResult](ctx, r, proto.OpWrite, req.Path, req.Caller, req)
}

// Edit runs ops.Engine.Edit on the host.
func (r *Remote) Edit(ctx context.Context, req ops.EditRequest) (*ops.EditResult, error) {
	return call[ops.EditResult](ctx, r, proto.OpEdit, req.Path, req.Caller, req)
}

// EditLines runs ops.Engine.EditLines on the host.
func (r *Remote) EditLines(ctx context.Context, req ops.EditLinesRequest) (*ops.LinesResult, error) {
	return call[ops.LinesResult](ctx, r, proto.OpEditLines, req.Path, req.Caller, req)
}

// Insert runs ops.Engine.Insert on the host.
func (r *Remote) Insert(ctx context.Context, req ops.InsertRequest) (*ops.LinesResult, error) {
	return call[ops.LinesResult](ctx, r, proto.OpInsert, req.Path, req.Caller, req)
}

// Undo runs ops.Engine.Undo on the host. An undo held to something (an
// ExpectedVersion, or a Caller's view of the file) is refused
// (bad_request) on a host that does not announce proto.FeatureUndoHeld:
// it would ignore both and revert whatever change is newest.
func (r *Remote) Undo(ctx context.Context, req ops.UndoRequest) (*ops.UndoResult, error) {
	if (req.ExpectedVersion != "" || req.Caller != "") && !r.host.Info().Capabilities.Has(proto.FeatureUndoHeld) {
		return nil, fserr.New(fserr.BadRequest, proto.OpUndo, req.Path,
			"host %s runs an fsplane whose undo reverts the newest change whoever made it: it ignores expected_version and the caller's view of the file", r.host.Info().Name).
			WithHint("update fsplane on that computer and reconnect it; until then, an undo over HTTP without expected_version (POST /v2/hosts/{host}/fs/undo) reverts the newest change, once you have checked it is the one to revert")
	}
	return call[ops.UndoResult](ctx, r, proto.OpUndo, req.Path, req.Caller, req)
}

// Patch runs ops.Engine.Patch on the host. ExpectedVersion travels as an
// entry of ExpectedVersions, which hosts from before it also check.
func (r *Remote) Patch(ctx context.Context, req ops.PatchRequest) (*ops.PatchResult, error) {
	req = req.Folded()
	return call[ops.PatchResult](ctx, r, proto.OpPatch, req.Path, req.Caller, req)
}

// Stat runs ops.Engine.Stat on the host.
func (r *Remote) Stat(ctx context.Context, req ops.StatRequest) (*ops.StatResult, error) {
	return call[ops.StatResult](ctx, r, proto.OpStat, req.Path, "", req)
}

// List runs ops.Engine.List on the host.
func (r *Remote) List(ctx context.Context, req ops.ListRequest) (*ops.ListResult, error) {
	return call[ops.ListResult](ctx, r, proto.OpList, req.Path, "", req)
}

// Grep runs ops.Engine.Grep on the host.
func (r *Remote) Grep(ctx context.Context, req ops.GrepRequest) (*ops.GrepResult, error) {
	return call[ops.GrepResult](ctx, r, proto.OpGrep, req.Path, "", req)
}

// Find runs ops.Engine.Find on the host (the protocol's search op).
func (r *Remote) Find(ctx context.Context, req ops.FindRequest) (*ops.FindResult, error) {
	return call[ops.FindResult](ctx, r, proto.OpSearch, req.Path, "", req)
}

// Download asks the host for a file's bytes, or the parts req names: it
// returns the file's size, version and time, and what is sent: the
// outcome the host decided for req.Conditional (Status, Parts), or the
// legacy Range's part (nil for the whole file: no range was asked, its
// If-Range condition failed, or the host predates ranges and ignored it).
// The bytes then flow into sink (which learns the end, or the failure,
// through Finish). With req.Head no bytes are wanted and sink is nil:
// bytes a host sends anyway (one from before Head) are refused.
func (r *Remote) Download(ctx context.Context, req proto.DownloadRequest, sink connector.DataSink) (*proto.DownloadResult, error) {
	var out proto.DownloadResult
	if err := r.host.CallData(ctx, proto.OpDownload, req.Path, "", req, &out, sink); err != nil {
		return nil, err
	}
	return &out, nil
}
