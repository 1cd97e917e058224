package mcpserver

import (
	"context"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
)

// Names of the tools that reach connected hosts.
const (
	toolTextEditorRemote = "text_editor_remote"
	toolRemoteGrep       = "remote_grep"
	toolRemoteList       = "remote_list"
	toolRemoteUndo       = "remote_undo"
)

// hostsState is what the connected hosts allow, which decides the remote
// tools listed.
type hostsState int

const (
	noHosts hostsState = iota
	hostsReadOnly
	hostsReadWrite
)

// remote follows a hub for the server.
type remote struct {
	mu    sync.Mutex
	hub   *hub.Hub
	state hostsState
}

// ServeHosts keeps the remote tools in step with h's hosts:
// text_editor_remote (Agent Zero's tool, plus host), remote_grep and
// remote_list are listed while a host is connected, and remote_undo only
// while some host is Read&Write. text_editor_remote always takes its
// three actions: with every host read-only, a write or patch is answered
// by the hub's read_only error, which tells the person to press F3 (a
// schema refusing the action could not), and the tool is annotated
// read-only meanwhile. Every change sends tools/list_changed. The
// returned function stops following the hub (the tools stay as they
// are).
func (s *Server) ServeHosts(h *hub.Hub) (stop func()) {
	s.remote = &remote{hub: h, state: -1}
	s.syncHosts()
	return h.Subscribe(s.syncHosts)
}

func (s *Server) syncHosts() {
	r := s.remote
	r.mu.Lock()
	defer r.mu.Unlock()
	state := noHosts
	for _, x := range r.hub.Hosts() {
		state = max(state, hostsReadOnly)
		if x.Mode == proto.ReadWrite {
			state = hostsReadWrite
		}
	}
	if state == r.state {
		return
	}
	r.state = state
	if state == noHosts {
		s.RemoveTools(toolTextEditorRemote, toolRemoteGrep, toolRemoteList, toolRemoteUndo)
		return
	}
	if state == hostsReadWrite {
		AddTool(s, &mcp.Tool{Name: toolRemoteUndo, Description: description(toolRemoteUndo),
			Annotations: writeTool("Undo a change on a connected computer", false)}, s.remoteUndo)
	} else {
		s.RemoveTools(toolRemoteUndo)
	}
	annotations := readOnlyTool("Read files on a connected computer (writes need F3 on the host)")
	if state == hostsReadWrite {
		annotations = writeTool("Read and edit files on a connected computer", false)
	}
	schema := schemaFor[textEditorRemoteArgs](func(js *jsonschema.Schema) {
		js.Properties["action"].Enum = []any{"read", "write", "patch"}
		js.Required = []string{"action", "path"}
	})
	AddTool(s, &mcp.Tool{Name: toolTextEditorRemote, Description: description(toolTextEditorRemote),
		Annotations: annotations, InputSchema: schema}, s.textEditorRemote)
	AddTool(s, &mcp.Tool{Name: toolRemoteGrep, Description: description(toolRemoteGrep),
		Annotations: readOnlyTool("Search files on a connected computer")}, s.remoteGrep)
	AddTool(s, &mcp.Tool{Name: toolRemoteList, Description: description(toolRemoteList),
		Annotations: readOnlyTool("List a directory on a connected computer")}, s.remoteList)
}

type textEditorRemoteArgs struct {
	client.TextEditorRequest
	Host string `json:"host,omitempty" jsonschema:"the host's name or id; omit when exactly one host is connected"`
}

// textEditorRemote runs Agent Zero's tool; freshness is per MCP session
// unless the call names its own context.
func (s *Server) textEditorRemote(ctx context.Context, c *Call, in textEditorRemoteArgs) (string, client.TextEditorResult, error) {
	req := in.TextEditorRequest
	if req.ContextID == "" {
		req.ContextID = c.Caller
	}
	res, err := s.remote.hub.TextEditor(ctx, in.Host, req)
	if err != nil {
		// The error text follows the other tools ("Error (code): …");
		// Agent Zero's validation and routing messages are kept.
		return "", client.TextEditorResult{}, hostError(err)
	}
	return res.Output, *res, nil
}

// hostReadOnlyHint is the hint of a write a Read-only host refused. The
// table's read_only hint says this server is read-only, which would tell
// the model that its local write tools are gone.
const hostReadOnlyHint = "the connected host is Read-only: the person at that computer can press F3 in fsplane connect to allow writes, then retry; the local tools are not affected"

// hostError gives a host's read_only refusal, which carries no hint, the
// host's.
func hostError(err error) error {
	if fe, ok := fserr.As(err); ok && fe.Code == fserr.ReadOnly && fe.Hint == "" {
		fe.Hint = hostReadOnlyHint
	}
	return err
}

type remoteGrepArgs struct {
	grepArgs
	Host string `json:"host,omitempty" jsonschema:"the host's name or id; omit when exactly one host is connected"`
}

func (s *Server) remoteGrep(ctx context.Context, _ *Call, in remoteGrepArgs) (string, grepResult, error) {
	pl, err := s.hostPlace(in.Host)
	if err != nil {
		return "", grepResult{}, err
	}
	return grepIn(ctx, pl, in.grepArgs)
}

type remoteListArgs struct {
	listArgs
	Host string `json:"host,omitempty" jsonschema:"the host's name or id; omit when exactly one host is connected"`
}

func (s *Server) remoteList(ctx context.Context, _ *Call, in remoteListArgs) (string, listResult, error) {
	pl, err := s.hostPlace(in.Host)
	if err != nil {
		return "", listResult{}, err
	}
	return listIn(ctx, pl, in.listArgs)
}

// hostPlace is a connected host as a place: paths resolve (and are
// confined) on the host; results show relative to its first root.
func (s *Server) hostPlace(host string) (place, error) {
	r, err := s.remote.hub.Remote(host)
	if err != nil {
		return place{}, err
	}
	roots := r.Host().Info().Roots
	base := "."
	if len(roots) > 0 {
		base = roots[0]
	}
	return place{
		eng:     r,
		path:    func(_, p string) (string, error) { return p, nil },
		display: func(abs string) string { return displayUnder(abs, base) },
		base:    base,
	}, nil
}

type remoteUndoArgs struct {
	undoArgs
	Host string `json:"host,omitempty" jsonschema:"the host's name or id; omit when exactly one host is connected"`
}

func (s *Server) remoteUndo(ctx context.Context, c *Call, in remoteUndoArgs) (string, undoResult, error) {
	pl, err := s.hostPlace(in.Host)
	if err != nil {
		return "", undoResult{}, err
	}
	// The session's text_editor_remote edits in this context (see
	// textEditorRemote): its undos are of those edits.
	text, out, err := undoIn(ctx, hub.TextEditorCaller(c.Caller), pl, in.undoArgs)
	return text, out, hostError(err)
}
