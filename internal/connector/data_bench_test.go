package connector

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

type discardSink struct{ done chan error }

func (d discardSink) Write(p []byte) (int, error) { return len(p), nil }
func (d discardSink) Finish(err error)            { d.done <- err }

// pair returns two Conns joined by a real loopback WebSocket.
func pair(b testing.TB) (client, server *Conn) {
	ch := make(chan *Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			b.Error(err)
			return
		}
		c := New(ws, proto.DefaultLimits)
		ch <- c
		<-c.Done()
	}))
	b.Cleanup(srv.Close)
	ws, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		b.Fatal(err)
	}
	client = New(ws, proto.DefaultLimits)
	server = <-ch
	b.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// BenchmarkSendData measures a data transfer's throughput over loopback:
// the host side sends, the hub side verifies and discards.
func BenchmarkSendData(b *testing.B) {
	host, hub := pair(b)
	go host.Run(context.Background(), func(any) {})
	go hub.Run(context.Background(), func(any) {})
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<20/16)
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		sink := discardSink{done: make(chan error, 1)}
		op := "op" + string(rune('a'+i%26))
		hub.ExpectData(op, sink)
		if err := host.SendData(context.Background(), op, bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
		if err := <-sink.done; err != nil {
			b.Fatal(err)
		}
	}
	_ = io.EOF
}
