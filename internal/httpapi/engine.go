package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/fsplane/fsplane/internal/ops"
)

// Engine is what the file routes need from the operation layer. The local
// *ops.Engine implements it, and so does a connected host reached through
// the hub (HostEngines), so /v2/hosts/{host}/fs/* routes run the very same
// handlers as /v2/fs/*. Implementations are safe for concurrent use.
type Engine interface {
	Read(context.Context, ops.ReadRequest) (*ops.ReadResult, error)
	Write(context.Context, ops.WriteRequest) (*ops.WriteResult, error)
	Edit(context.Context, ops.EditRequest) (*ops.EditResult, error)
	EditLines(context.Context, ops.EditLinesRequest) (*ops.LinesResult, error)
	Insert(context.Context, ops.InsertRequest) (*ops.LinesResult, error)
	Undo(context.Context, ops.UndoRequest) (*ops.UndoResult, error)
	Patch(context.Context, ops.PatchRequest) (*ops.PatchResult, error)
	Stat(context.Context, ops.StatRequest) (*ops.StatResult, error)
	List(context.Context, ops.ListRequest) (*ops.ListResult, error)
	Grep(context.Context, ops.GrepRequest) (*ops.GrepResult, error)
	Find(context.Context, ops.FindRequest) (*ops.FindResult, error)
}

// quotedReader is an Engine that can hand a read's text over as the JSON
// string literal it arrived in (hub.Remote): the read routes copy it into
// their answer instead of decoding and escaping it again.
type quotedReader interface {
	ReadQuoted(context.Context, ops.ReadRequest) (*ops.ReadResult, []byte, error)
}

// engineFor returns the engine a request addresses: a connected host for
// /v2/hosts/{host}/... routes ("-" names the only connected host), else
// the local workspace.
func (s *Server) engineFor(r *http.Request) (Engine, error) {
	if !strings.HasPrefix(r.Pattern, "POST /v2/hosts/") && !strings.HasPrefix(r.Pattern, "GET /v2/hosts/") {
		return s.eng, nil
	}
	host := r.PathValue("host")
	if host == "-" {
		host = ""
	}
	return s.hub.Remote(host)
}
