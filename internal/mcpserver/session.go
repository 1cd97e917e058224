package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is what the server keeps per MCP session: its freshness caller
// and its roots.
type session struct {
	caller string

	mu         sync.Mutex // guards the fields below; held while roots are fetched
	rootsKnown bool       // roots is current (fetched since the last list_changed)
	listed     bool       // roots/list succeeded at least once: on failure, its roots stay
	restricted bool       // the client named roots: only roots may be touched
	roots      []string   // the effective roots when restricted, absolute
	clientList []string   // the client's roots as given, for messages
}

// session returns the state of ss, creating it on first use. A session's
// state is dropped, with its read state in the engine's tracker, when the
// session ends.
func (s *Server) session(ss *mcp.ServerSession) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.sessions[ss]; ok {
		return st
	}
	caller := ss.ID()
	if caller == "" {
		// stdio and in-memory sessions have no ID.
		caller = "session-" + randomID()
	}
	st := &session{caller: "mcp:" + caller}
	s.sessions[ss] = st
	go func() {
		_ = ss.Wait()
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
		s.eng.Tracker().DropCaller(st.caller)
	}()
	return st
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// rootsChanged handles notifications/roots/list_changed: the session's
// roots are fetched again before its next tool call.
func (s *Server) rootsChanged(_ context.Context, req *mcp.RootsListChangedRequest) {
	st := s.session(req.Session)
	st.mu.Lock()
	st.rootsKnown = false
	st.mu.Unlock()
}

// Call describes one tool call to a handler.
type Call struct {
	// Caller identifies the session for freshness: pass it as the Caller of
	// ops requests (and of connector operations).
	Caller string
	// Session is the MCP session the call came on.
	Session *mcp.ServerSession

	srv  *Server
	sess *session
}
