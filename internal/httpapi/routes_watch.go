package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/watch"
)

// watchRoutes registers the watch routes: v2 under /v2/watch, v1 under
// /v1/file/watch (poll by POST body, plus wait). Watch-specific failures
// answer 400/404/429/503 with a message and no data, as AIO does; path
// failures use the file error table.
func (s *Server) watchRoutes() {
	s.handle(route{Method: "POST", Path: "/v2/watch", Summary: "Watch a file or directory tree (shared when the config is identical)", Tag: "v2",
		Body: typeOf[client.CreateWatchRequest](), Data: typeOf[client.WatcherCreated](), Statuses: []int{400, 403, 404, 429, 503}, BareErrors: true}, s.createWatch)
	s.handle(route{Method: "GET", Path: "/v2/watch", Summary: "List watchers", Tag: "v2", Data: typeOf[[]client.WatcherInfo](), Statuses: []int{503}, BareErrors: true}, s.listWatches)
	s.handle(route{Method: "GET", Path: "/v2/watch/{id}/poll", Summary: "Events after a cursor (long-poll with timeout)", Tag: "v2", Stream: true,
		Query: typeOf[client.PollQuery](), Data: typeOf[client.PollResult](), Statuses: []int{400, 404, 503}, BareErrors: true}, s.pollWatch(false))
	s.handle(route{Method: "GET", Path: "/v2/watch/{id}/events", Summary: "Events as server-sent events (Last-Event-ID resumes)", Tag: "v2", Stream: true,
		Params: sseParams, Raw: "text/event-stream", Statuses: []int{400, 404, 503}, BareErrors: true}, s.watchEvents)
	s.handle(route{Method: "DELETE", Path: "/v2/watch/{id}", Summary: "Release one subscriber of a watcher (the last stops it)", Tag: "v2",
		Data: typeOf[client.WatcherStopped](), Statuses: []int{404, 503}, BareErrors: true}, s.stopWatch)
	if s.opts.Surface == "v2" {
		return
	}
	s.handle(route{Method: "POST", Path: "/v1/file/watch", Summary: "Watch a file or directory tree", Tag: "v1",
		Body: typeOf[client.CreateWatchRequest](), Data: typeOf[client.WatcherCreated](), Statuses: []int{400, 403, 404, 429, 503}, BareErrors: true}, s.createWatch)
	s.handle(route{Method: "GET", Path: "/v1/file/watch", Summary: "List watchers", Tag: "v1", Data: typeOf[[]client.WatcherInfo](), Statuses: []int{503}, BareErrors: true}, s.listWatches)
	s.handle(route{Method: "POST", Path: "/v1/file/watch/{id}/poll", Summary: "Events after a cursor (long-poll with timeout)", Tag: "v1", Stream: true,
		Body: typeOf[client.PollRequest](), Data: typeOf[client.PollResult](), Statuses: []int{400, 404, 503}, BareErrors: true}, s.pollWatch(true))
	s.handle(route{Method: "GET", Path: "/v1/file/watch/{id}/events", Summary: "Events as server-sent events", Tag: "v1", Stream: true,
		Params: sseParams, Raw: "text/event-stream", Statuses: []int{400, 404, 503}, BareErrors: true}, s.watchEvents)
	s.handle(route{Method: "DELETE", Path: "/v1/file/watch/{id}", Summary: "Release one subscriber of a watcher", Tag: "v1",
		Data: typeOf[client.WatcherStopped](), Statuses: []int{404, 503}, BareErrors: true}, s.stopWatch)
	s.handle(route{Method: "POST", Path: "/v1/file/watch/wait", Summary: "Wait for one event on a path (503 on timeout)", Tag: "v1", Stream: true,
		Body: typeOf[client.WaitRequest](), Data: typeOf[client.WaitResult](), Statuses: []int{400, 403, 404, 503}, BareErrors: true}, s.waitWatch)
}

// sseParams are the event stream's ways to resume.
var sseParams = []param{
	{Name: "Last-Event-ID", In: "header", Type: "string", Description: "<watcher_id>:<seq> of the last event received: resume after it"},
	{Name: "cursor", In: "query", Type: "integer", Description: "resume after this seq (without Last-Event-ID; default 0 replays the buffer)"},
}

// watchStatus is the status of each watch failure kind.
var watchStatus = map[watch.Kind]int{
	watch.Invalid:     http.StatusBadRequest,
	watch.NotFound:    http.StatusNotFound,
	watch.Limit:       http.StatusTooManyRequests,
	watch.Unavailable: http.StatusServiceUnavailable,
	watch.Timeout:     http.StatusServiceUnavailable,
}

// watchFail answers a watch route's failure.
func watchFail(w http.ResponseWriter, path string, err error) {
	if we, isWatch := errors.AsType[*watch.Error](err); isWatch {
		writeJSON(w, watchStatus[we.Kind], envelope{Success: false, Message: we.Message})
		return
	}
	fail(w, v2, "watch", path, err)
}

func badParam(w http.ResponseWriter, format string, args ...any) {
	writeJSON(w, http.StatusBadRequest, envelope{Success: false, Message: fmt.Sprintf(format, args...)})
}

func epoch(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func (s *Server) createWatch(w http.ResponseWriter, r *http.Request) {
	var b client.CreateWatchRequest
	if errs := decode(r, &b, bodyRules{}); len(errs) > 0 {
		invalid(w, errs)
		return
	}
	req := ops.WatchRequest{Path: b.Path, Recursive: b.Recursive == nil || *b.Recursive, Include: b.IncludePatterns}
	if b.Debounce != nil {
		if *b.Debounce < int(watch.MinDebounce.Milliseconds()) || *b.Debounce > int(watch.MaxDebounce.Milliseconds()) {
			badParam(w, "debounce must be between %d and %d ms, got %d", watch.MinDebounce.Milliseconds(), watch.MaxDebounce.Milliseconds(), *b.Debounce)
			return
		}
		req.Debounce = time.Duration(*b.Debounce) * time.Millisecond
	}
	if b.Exclude != nil {
		req.Exclude = append([]string{}, *b.Exclude...)
	}
	res, err := s.eng.Watch(r.Context(), req)
	if err != nil {
		watchFail(w, b.Path, err)
		return
	}
	ok(w, "Watcher created", client.WatcherCreated{WatcherID: res.Watcher.ID(), Path: res.Path, Status: "active",
		CreatedAt: epoch(res.Created), Reused: res.Reused, InitialCursor: res.InitialCursor})
}

func watcherInfo(i watch.Info) client.WatcherInfo {
	return client.WatcherInfo{WatcherID: i.ID, Path: i.Path, Recursive: i.Recursive, Status: i.Status, StopReason: i.StopReason,
		SubscriberCount: i.Subscribers, EventCount: i.EventCount, LatestSeq: i.LatestSeq, CreatedAt: epoch(i.Created),
		Unwatched: i.Unwatched}
}

func (s *Server) listWatches(w http.ResponseWriter, r *http.Request) {
	list, err := s.eng.Watchers()
	if err != nil {
		watchFail(w, "", err)
		return
	}
	out := make([]client.WatcherInfo, 0, len(list))
	for _, i := range list {
		out = append(out, watcherInfo(i))
	}
	ok(w, "Operation successful", out)
}

func (s *Server) stopWatch(w http.ResponseWriter, r *http.Request) {
	info, err := s.eng.StopWatch(r.PathValue("id"))
	if err != nil {
		watchFail(w, "", err)
		return
	}
	ok(w, "Watcher released", client.WatcherStopped{WatcherID: info.ID, Status: info.Status, SubscriberCount: info.Subscribers})
}

// pollParams checks a poll's cursor, limit and timeout; out-of-range
// values are 400 (AIO), values of the wrong type 422.
func pollParams(w http.ResponseWriter, p client.PollQuery) (cursor int64, limit int, timeout time.Duration, ok bool) {
	limit = 100
	if p.Cursor != nil {
		if *p.Cursor < 0 {
			badParam(w, "cursor must be >= 0, got %d", *p.Cursor)
			return 0, 0, 0, false
		}
		cursor = *p.Cursor
	}
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > 1000 {
			badParam(w, "limit must be between 1 and 1000, got %d", *p.Limit)
			return 0, 0, 0, false
		}
		limit = *p.Limit
	}
	if p.Timeout != nil {
		// Written so that NaN (which ParseFloat accepts from the query,
		// and which compares false both ways) fails too.
		if !(*p.Timeout >= 0 && *p.Timeout <= 60) {
			badParam(w, "timeout must be between 0 and 60 seconds, got %g", *p.Timeout)
			return 0, 0, 0, false
		}
		timeout = time.Duration(*p.Timeout * float64(time.Second))
	}
	return cursor, limit, timeout, true
}

// pollQuery reads PollQuery from the query string.
func pollQuery(r *http.Request) (client.PollQuery, []client.ValidationError) {
	var p client.PollQuery
	q := newQuery(r)
	if v := q.str("cursor", false); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			q.errs = append(q.errs, client.ValidationError{Location: []string{"query", "cursor"}, Message: "cursor must be an integer", Type: "type_error.integer"})
		}
		p.Cursor = &n
	}
	if v := q.str("limit", false); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			q.errs = append(q.errs, client.ValidationError{Location: []string{"query", "limit"}, Message: "limit must be an integer", Type: "type_error.integer"})
		}
		p.Limit = &n
	}
	if v := q.str("timeout", false); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			q.errs = append(q.errs, client.ValidationError{Location: []string{"query", "timeout"}, Message: "timeout must be a number of seconds", Type: "type_error.number"})
		}
		p.Timeout = &f
	}
	return p, q.errs
}

func (s *Server) pollWatch(body bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var p client.PollQuery
		var errs []client.ValidationError
		if body {
			errs = decode(r, &p, bodyRules{})
		} else {
			p, errs = pollQuery(r)
		}
		if len(errs) > 0 {
			invalid(w, errs)
			return
		}
		cursor, limit, timeout, valid := pollParams(w, p)
		if !valid {
			return
		}
		wt, err := s.eng.Watcher(r.PathValue("id"))
		if err != nil {
			watchFail(w, "", err)
			return
		}
		res := wt.Poll(r.Context(), cursor, limit, timeout)
		out := client.PollResult{Events: make([]client.WatchEvent, 0, len(res.Events)), Cursor: res.Cursor, Overflow: res.Overflow,
			Unwatched: res.Unwatched}
		for _, ev := range res.Events {
			out.Events = append(out.Events, wireEvent(ev))
		}
		ok(w, "Operation successful", out)
	}
}

func wireEvent(ev watch.Event) client.WatchEvent {
	out := client.WatchEvent{Seq: ev.Seq, Type: ev.Type, Path: ev.Path, IsDir: ev.IsDir, Timestamp: epoch(ev.Time)}
	if ev.RelativePath != "" {
		rel := ev.RelativePath
		out.RelativePath = &rel
	}
	if ev.OldPath != "" {
		old := ev.OldPath
		out.OldPath = &old
	}
	if st := ev.Stat; st != nil {
		m, size, ino := epoch(st.ModTime), st.Size, st.Inode
		out.Mtime, out.Size, out.Inode = &m, &size, &ino
	}
	return out
}

// sseKeepalive is how often an idle event stream sends a comment.
const sseKeepalive = 15 * time.Second

// watchEvents streams a watcher's events as server-sent events:
// watch_started first, then file_change events with "id: <watcher>:<seq>",
// and overflow when events were dropped. Last-Event-ID (or ?cursor=)
// resumes after that event (one of another watcher replays, as it does
// not number this one's events); without either the stream replays the
// watcher's buffer from the start. The stream ends when the watcher stops,
// with watch_stopped and the reason. An open stream keeps the watcher
// from expiring (watch.Options.IdleTimeout).
func (s *Server) watchEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	wt, err := s.eng.Watcher(id)
	if err != nil {
		watchFail(w, "", err)
		return
	}
	var cursor int64
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		seq, other := last, false
		if i := strings.LastIndexByte(last, ':'); i >= 0 {
			seq, other = last[i+1:], last[:i] != id
		}
		n, err := strconv.ParseInt(seq, 10, 64)
		if err != nil || n < 0 {
			badParam(w, "Last-Event-ID %q is not <watcher_id>:<seq>", last)
			return
		}
		if !other {
			// Another watcher's numbers are not this one's: its event
			// replays this watcher's buffer from the start.
			cursor = n
		}
	} else if v := queryValues(r).Get("cursor"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			badParam(w, "cursor must be an integer >= 0")
			return
		}
		cursor = n
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event, eventID string, data any) bool {
		b, _ := json.Marshal(data)
		var sb strings.Builder
		if eventID != "" {
			sb.WriteString("id: " + eventID + "\n")
		}
		sb.WriteString("event: " + event + "\ndata: ")
		sb.Write(b)
		sb.WriteString("\n\n")
		if _, err := w.Write([]byte(sb.String())); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send("watch_started", "", map[string]any{"watcher_id": id, "cursor": cursor}) {
		return
	}
	for r.Context().Err() == nil {
		res := wt.Poll(r.Context(), cursor, 1000, sseKeepalive)
		if res.Overflow {
			ev := map[string]any{"watcher_id": id, "cursor": res.Cursor, "message": "events were dropped; rescan the tree"}
			if res.Unwatched > 0 {
				ev["unwatched"] = res.Unwatched
			}
			if !send("overflow", "", ev) {
				return
			}
		}
		for _, ev := range res.Events {
			if !send("file_change", fmt.Sprintf("%s:%d", id, ev.Seq), wireEvent(ev)) {
				return
			}
		}
		if len(res.Events) == 0 && !res.Overflow {
			if wt.Stopped() {
				send("watch_stopped", "", map[string]any{"watcher_id": id, "reason": wt.StopReason()})
				return
			}
			if _, err := w.Write([]byte(": keepalive\n\n")); err != nil || rc.Flush() != nil {
				return
			}
		}
		cursor = res.Cursor
	}
}

func (s *Server) waitWatch(w http.ResponseWriter, r *http.Request) {
	var b client.WaitRequest
	if errs := decode(r, &b, bodyRules{}); len(errs) > 0 {
		invalid(w, errs)
		return
	}
	timeout := 30 * time.Second
	if b.Timeout != nil {
		if !(*b.Timeout >= 1 && *b.Timeout <= 300) { // NaN fails too
			badParam(w, "timeout must be between 1 and 300 seconds, got %g", *b.Timeout)
			return
		}
		timeout = time.Duration(*b.Timeout * float64(time.Second))
	}
	known := map[string]bool{}
	for _, t := range watch.Types {
		known[t] = true
	}
	for _, t := range b.EventTypes {
		if !known[t] {
			badParam(w, "unknown event type %q; use create, write, remove, rename or chmod", t)
			return
		}
	}
	ev, err := s.eng.WaitEvent(r.Context(), ops.WaitRequest{Path: b.Path, Timeout: timeout, Types: b.EventTypes})
	if err != nil {
		watchFail(w, b.Path, err)
		return
	}
	ok(w, "Event received", client.WaitResult{Event: wireEvent(*ev)})
}
