package client

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// CreateWatch starts a watcher, or shares an identical one (POST /v2/watch).
func (c *Client) CreateWatch(ctx context.Context, req CreateWatchRequest) (*WatcherCreated, error) {
	return do[WatcherCreated](ctx, c, "POST", "/v2/watch", nil, req)
}

// Watches lists the watchers (GET /v2/watch).
func (c *Client) Watches(ctx context.Context) ([]WatcherInfo, error) {
	out, err := do[[]WatcherInfo](ctx, c, "GET", "/v2/watch", nil, nil)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// PollWatch returns the events after q.Cursor (GET /v2/watch/{id}/poll);
// with q.Timeout it waits for the first one.
func (c *Client) PollWatch(ctx context.Context, id string, q PollQuery) (*PollResult, error) {
	return do[PollResult](ctx, c, "GET", "/v2/watch/"+url.PathEscape(id)+"/poll", q, nil)
}

// StopWatch releases one subscriber of a watcher (DELETE /v2/watch/{id}).
func (c *Client) StopWatch(ctx context.Context, id string) (*WatcherStopped, error) {
	return do[WatcherStopped](ctx, c, "DELETE", "/v2/watch/"+url.PathEscape(id), nil, nil)
}

// V1CreateWatch is CreateWatch on POST /v1/file/watch.
func (c *Client) V1CreateWatch(ctx context.Context, req CreateWatchRequest) (*WatcherCreated, error) {
	return do[WatcherCreated](ctx, c, "POST", "/v1/file/watch", nil, req)
}

// V1PollWatch is PollWatch on POST /v1/file/watch/{id}/poll.
func (c *Client) V1PollWatch(ctx context.Context, id string, req PollRequest) (*PollResult, error) {
	return do[PollResult](ctx, c, "POST", "/v1/file/watch/"+url.PathEscape(id)+"/poll", nil, req)
}

// V1StopWatch is StopWatch on DELETE /v1/file/watch/{id}.
func (c *Client) V1StopWatch(ctx context.Context, id string) (*WatcherStopped, error) {
	return do[WatcherStopped](ctx, c, "DELETE", "/v1/file/watch/"+url.PathEscape(id), nil, nil)
}

// V1Wait waits for one event on an exact path (POST /v1/file/watch/wait);
// a timeout is an *Error with Status 503.
func (c *Client) V1Wait(ctx context.Context, req WaitRequest) (*WaitResult, error) {
	return do[WaitResult](ctx, c, "POST", "/v1/file/watch/wait", nil, req)
}

// SSEEvent is one server-sent event.
type SSEEvent struct {
	Event string // watch_started, file_change, overflow, watch_stopped
	ID    string // "<watcher_id>:<seq>" on file_change
	Data  []byte // JSON; a WatchEvent for file_change
}

// EventStream reads a watcher's server-sent events.
type EventStream struct {
	body io.ReadCloser
	br   *bufio.Reader
}

// WatchEvents opens a watcher's event stream (GET /v2/watch/{id}/events).
// lastEventID, when set, resumes after that event.
func (c *Client) WatchEvents(ctx context.Context, id, lastEventID string) (*EventStream, error) {
	h := http.Header{"Accept": {"text/event-stream"}}
	if lastEventID != "" {
		h.Set("Last-Event-ID", lastEventID)
	}
	resp, err := c.request(ctx, "GET", "/v2/watch/"+url.PathEscape(id)+"/events", nil, nil, h)
	if err != nil {
		return nil, err
	}
	return &EventStream{body: resp.Body, br: bufio.NewReader(resp.Body)}, nil
}

// Next returns the next event; comments (keepalives) are skipped. It
// returns io.EOF when the stream ends.
func (s *EventStream) Next() (SSEEvent, error) {
	var ev SSEEvent
	var data bytes.Buffer
	seen := false
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if seen {
				ev.Data = data.Bytes()
				return ev, nil
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		seen = true
		switch field {
		case "event":
			ev.Event = value
		case "id":
			ev.ID = value
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		}
	}
}

// Close ends the stream.
func (s *EventStream) Close() error { return s.body.Close() }
