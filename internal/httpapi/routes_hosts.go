package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/connector/hub"
)

// hostRoutes registers the hub: /v2/connector for hosts, /v2/hosts for
// agents, and every file route again under /v2/hosts/{host}/fs/, served by
// the same handlers through the host's engine (engineFor).
func (s *Server) hostRoutes() {
	s.handle(route{Method: "GET", Path: "/v2/connector", Summary: "WebSocket for `fsplane connect` hosts (docs/connector-protocol.md); authenticated with the connector token", Tag: "hosts", Raw: "application/octet-stream", Stream: true},
		s.hub.ServeHTTP)
	s.handle(route{Method: "GET", Path: "/v2/hosts", Summary: "Connected hosts", Tag: "hosts", Data: typeOf[client.HostList]()}, s.listHosts)
	const p = "/v2/hosts/{host}"
	s.handle(route{Method: "GET", Path: p + "/fs/read", Summary: "Read a text file on a host (as GET /v2/fs/read)", Tag: "hosts",
		Query: typeOf[client.ReadQuery](), Data: typeOf[client.ReadResult](), Statuses: hostStatuses, Params: hostParams}, s.hostCall(s.v2Read))
	s.handle(route{Method: "POST", Path: p + "/fs/write", Summary: "Write a file on a host (as POST /v2/fs/write)", Tag: "hosts",
		Body: typeOf[client.WriteRequest](), Data: typeOf[client.WriteResult](), Statuses: hostStatuses, Params: hostParams}, s.hostCall(s.v2Write))
	s.handle(route{Method: "POST", Path: p + "/fs/edit", Summary: "Edit a file on a host (as POST /v2/fs/edit)", Tag: "hosts",
		Body: typeOf[client.EditRequest](), Data: typeOf[client.EditorResult](), Statuses: hostStatuses, Params: hostParams}, s.hostCall(s.v2Edit))
	s.handle(route{Method: "POST", Path: p + "/fs/patch", Summary: "Patch files on a host (as POST /v2/fs/patch)", Tag: "hosts",
		Body: typeOf[client.PatchRequest](), Data: typeOf[client.PatchResult](), Statuses: hostStatuses, Params: hostParams}, s.hostCall(s.v2Patch))
	s.handle(route{Method: "POST", Path: p + "/fs/undo", Summary: "Undo the last recorded change of a file on a host (as POST /v2/fs/undo); the host keeps the history", Tag: "hosts",
		Body: typeOf[client.UndoRequest](), Data: typeOf[client.UndoResult](), Statuses: hostStatuses, Params: hostParams}, s.hostCall(s.v2Undo))
	s.handle(route{Method: "GET", Path: p + "/fs/stat", Summary: "Describe a path on a host (as GET /v2/fs/stat)", Tag: "hosts",
		Query: typeOf[client.StatQuery](), Data: typeOf[client.StatResult](), Statuses: hostStatuses, Params: hostParams}, s.hostCall(s.v2Stat))
	s.handle(route{Method: "GET", Path: p + "/fs/list", Summary: "List a directory on a host (as GET /v2/fs/list)", Tag: "hosts",
		Query: typeOf[client.ListQuery](), Data: typeOf[client.ListResult](), Statuses: hostStatuses, Params: hostParams}, s.hostCall(s.v2List))
	s.handle(route{Method: "POST", Path: p + "/fs/grep", Summary: "Search file contents on a host (as POST /v2/fs/grep)", Tag: "hosts",
		Body: typeOf[client.GrepRequest](), Data: typeOf[client.GrepResult](), Statuses: hostStatuses, Params: hostParams}, s.hostCall(s.grep(v2)))
	s.handle(route{Method: "GET", Path: p + "/fs/search", Summary: "Find files by name on a host (as GET /v2/fs/search)", Tag: "hosts",
		Query: typeOf[client.FindQuery](), Data: typeOf[client.FindResult](), Statuses: hostStatuses, Params: hostParams}, s.hostCall(s.v2Find))
	s.handle(route{Method: "GET", Path: p + "/fs/download", Summary: "Download a file's bytes from a host, streamed, as GET /v2/fs/download (Range, several ranges, If-Range, If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, ETag = version; up to the transfer limit per response)", Tag: "hosts",
		Query: typeOf[client.HostDownloadQuery](), Raw: "application/octet-stream", Statuses: hostDownloadStatuses, Params: hostParams, Conditional: true}, s.hostCall(s.hostDownload))
	s.handle(route{Method: "POST", Path: p + "/text_editor", Summary: "Agent Zero's text_editor_remote on a host: read, write or patch", Tag: "hosts",
		Body: typeOf[client.TextEditorRequest](), Data: typeOf[client.TextEditorResult](), Statuses: hostStatuses, Params: hostParams,
		ErrData: typeOf[client.TextEditorResult]()}, s.hostCall(s.textEditor))
}

// hostParams are what hostCall reads besides the route's own parameters.
var hostParams = []param{{Name: "timeout", In: "query", Type: "number", Description: "seconds to wait for the host, in (0, 3600] (default: the server's --op-timeout)"}}

// hostStatuses are the failures a host call adds to the local ones.
var hostStatuses = []int{400, 403, 404, 409, 503, 504}

// hostDownloadStatuses add 413 (a file, or range, over the connector's
// transfer limit) and 416 (a range the file cannot satisfy).
var hostDownloadStatuses = []int{400, 403, 404, 409, 413, 416, 503, 504}

// hostCall applies the per-call deadline (?timeout=seconds) to a host
// route.
func (s *Server) hostCall(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if t := queryValues(r).Get("timeout"); t != "" {
			sec, err := strconv.ParseFloat(t, 64)
			// Written so that NaN (which ParseFloat accepts, and which
			// compares false both ways) fails too.
			if err != nil || !(sec > 0 && sec <= 3600) {
				invalid(w, []client.ValidationError{{Location: []string{"query", "timeout"}, Message: "timeout must be a number of seconds in (0, 3600]", Type: "type_error.number"}})
				return
			}
			r = r.WithContext(hub.WithTimeout(r.Context(), time.Duration(sec*float64(time.Second))))
		}
		h(w, r)
	}
}

func (s *Server) listHosts(w http.ResponseWriter, r *http.Request) {
	out := client.HostList{Hosts: []client.HostInfo{}}
	for _, h := range s.hub.Hosts() {
		out.Hosts = append(out.Hosts, client.HostInfo{
			ID: h.ID, Name: h.Name, Mode: string(h.Mode), Roots: h.Roots,
			ConnectedAt: h.ConnectedAt.UTC().Format(time.RFC3339Nano), Capabilities: h.Capabilities.Ops, Features: h.Capabilities.Features, Version: h.Version,
		})
	}
	ok(w, "Operation successful", out)
}
