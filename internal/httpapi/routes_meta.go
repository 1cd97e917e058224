package httpapi

import (
	"cmp"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"runtime"
	"strings"
	"time"

	"github.com/fsplane/fsplane/client"
)

func (s *Server) metaRoutes() {
	s.handle(route{Method: "GET", Path: "/{$}", Summary: "Service index", Tag: "meta", Data: typeOf[map[string]string]()}, func(w http.ResponseWriter, r *http.Request) {
		ok(w, "fsplane file API; GET /openapi.json lists the routes", map[string]string{"name": "fsplane", "version": s.opts.Version, "openapi": "/openapi.json"})
	})
	s.handle(route{Method: "GET", Path: "/health", Summary: "Liveness probe", Tag: "meta", Raw: "application/json", Data: typeOf[client.Health]()}, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, client.Health{Status: "ok", Version: s.opts.Version, Server: "fsplane", Revision: s.opts.Version})
	})
	if s.opts.Surface != "v2" {
		s.handle(route{Method: "GET", Path: "/v1/ping", Summary: "Ping", Tag: "meta", Data: typeOf[string]()}, func(w http.ResponseWriter, r *http.Request) {
			ok(w, "pong", "pong")
		})
		s.handle(route{Method: "GET", Path: "/v1/sandbox", Summary: "Workspace and system information in AIO 1.x's layout (the SDKs' get_context)", Tag: "meta",
			Raw: "application/json", Data: typeOf[client.V1Sandbox]()}, func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, s.v1Sandbox())
		})
		s.handle(route{Method: "GET", Path: "/v1/capabilities", Summary: "What this server can do", Tag: "meta", Data: typeOf[client.Capabilities]()}, func(w http.ResponseWriter, r *http.Request) {
			ok(w, "Operation successful", s.capabilitiesOf())
		})
	}
	s.handle(route{Method: "GET", Path: "/v2/sandbox", Summary: "Workspace and system information", Tag: "meta", Data: typeOf[client.SandboxInfo]()}, func(w http.ResponseWriter, r *http.Request) {
		ok(w, "Operation successful", s.sandbox())
	})
	docs := []string{"/openapi.json", "/v2/openapi.json"}
	if s.opts.Surface != "v2" {
		docs = append(docs, "/v1/openapi.json")
	}
	for _, p := range docs {
		s.handle(route{Method: "GET", Path: p, Summary: "OpenAPI 3.1 document", Tag: "meta", Raw: "application/json"}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(s.openAPI())
		})
	}
}

// capabilitiesOf reports the file routes this server really serves: a flag
// is true only when its route is registered.
func (s *Server) capabilitiesOf() client.Capabilities {
	has := map[string]bool{}
	for _, r := range s.routes {
		has[r.Method+" "+r.Path] = true
	}
	v1 := func(p string) bool { return has["POST /v1/file/"+p] }
	files := map[string]bool{
		"native":             true,
		"read":               v1("read") || has["GET /v2/fs/read"],
		"write":              v1("write") || has["POST /v2/fs/write"],
		"replace":            v1("replace") || has["POST /v2/fs/edit"],
		"search":             v1("search"),
		"find":               v1("find") || has["GET /v2/fs/search"],
		"grep":               v1("grep") || has["POST /v2/fs/grep"],
		"glob":               v1("glob"),
		"list":               v1("list") || has["GET /v2/fs/list"],
		"download":           has["GET /v1/file/download"] || has["GET /v2/fs/download"],
		"str_replace_editor": v1("str_replace_editor") || has["POST /v2/fs/edit"],
		"watch":              has["POST /v2/watch"] || has["POST /v1/file/watch"],
	}
	absent := map[string]any{"status": "absent", "missing": []string{"not provided by fsplane"}, "warnings": []string{}}
	return client.Capabilities{
		Schema:          "aio.capabilities.v1",
		Files:           files,
		Exec:            map[string]bool{"shell": false, "bash": false, "pty": false},
		Bins:            map[string]any{"bash": nil, "sh": nil, "ps": nil, "powershell": nil, "cmd": nil},
		Browser:         absent,
		CodeInterpreter: absent,
		Computer:        absent,
		Extensions: map[string]bool{
			"versions": true, "tolerant_edit": true, "patch": has["POST /v2/fs/patch"], "undo": has["POST /v2/fs/undo"],
		},
	}
}

func (s *Server) sandbox() client.SandboxInfo {
	roots := s.eng.Workspace().Roots()
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	zone, _ := time.Now().Zone()
	return client.SandboxInfo{
		WorkspaceDir: roots[0], Workspace: roots[0], Version: s.opts.Version, Roots: roots,
		Detail: client.SandboxDetail{System: client.SystemInfo{
			OS: runtime.GOOS, Arch: runtime.GOARCH, User: name, Timezone: zone,
			WorkspaceDir: roots[0], Workspace: roots[0], Hostname: host,
			UptimeSec: int64(time.Since(s.started).Seconds()),
		}},
		Capabilities: s.capabilitiesOf(),
	}
}

// v1Sandbox is sandbox in AIO 1.x's layout.
func (s *Server) v1Sandbox() client.V1Sandbox {
	info := s.sandbox()
	sys := info.Detail.System
	home := info.WorkspaceDir
	return client.V1Sandbox{
		Success: true, Message: "Operation successful",
		Data: fmt.Sprintf("fsplane %s: files only (no shell, browser or code execution); roots %s; %s/%s; user %s",
			info.Version, strings.Join(info.Roots, ", "), sys.OS, sys.Arch, cmp.Or(sys.User, "unknown")),
		HomeDir: home, WorkspaceDir: home, Workspace: home, Version: info.Version,
		Detail: client.V1SandboxDetail{
			System: client.V1SystemEnv{OS: sys.OS, Arch: sys.Arch, User: sys.User, HomeDir: home, Workspace: home,
				Timezone: sys.Timezone, OccupiedPorts: []int{}},
			Runtime: map[string][]string{"python": {}, "nodejs": {}},
			Utils:   []string{},
		},
	}
}
