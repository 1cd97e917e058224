package connector

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/testenv"
)

type discardSink struct{ done chan error }

func (d discardSink) Write(p []byte) (int, error) { return len(p), nil }
func (d discardSink) Finish(err error)            { d.done <- err }

// pairWith returns two Conns joined by a real loopback WebSocket; with
// gather, the client's messages go out through a FrameConn, as the
// host's do.
func pairWith(b testing.TB, gather bool) (client, server *Conn) {
	return pair(b, pairOpts{gather: gather})
}

// pairOpts shape the client side of a pair.
type pairOpts struct {
	gather bool                    // write through a FrameConn, as the host does
	uplink int                     // throttle the client's bytes to this many per second (see testenv.Throttle)
	wrap   func(net.Conn) net.Conn // wraps the client's network connection (under any FrameConn)
}

// pair is pairWith with more options.
func pair(b testing.TB, o pairOpts) (client, server *Conn) {
	gather, uplink := o.gather, o.uplink
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
	addr := strings.TrimPrefix(srv.URL, "http://")
	if uplink > 0 {
		addr = testenv.Throttle(b, addr, uplink, nil)
	}
	var fc *FrameConn
	opts := &websocket.DialOptions{HTTPClient: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil && uplink > 0 {
				// Small, like the buffers of a slow link: writes block.
				_ = c.(*net.TCPConn).SetWriteBuffer(8 << 10)
			}
			if err == nil && o.wrap != nil {
				c = o.wrap(c)
			}
			if err == nil && gather {
				fc = NewFrameConn(c)
				return fc, nil
			}
			return c, err
		},
	}}}
	ws, _, err := websocket.Dial(context.Background(), "ws://"+addr, opts)
	if err != nil {
		b.Fatal(err)
	}
	client = New(ws, proto.DefaultLimits)
	if fc != nil {
		client.GatherWrites(fc)
	}
	server = <-ch
	b.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// BenchmarkSendData measures a data transfer's throughput over loopback:
// the host side sends (with and without FrameConn), the hub side verifies
// and discards.
func BenchmarkSendData(b *testing.B) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<20/16)
	for _, gather := range []bool{false, true} {
		b.Run(fmt.Sprintf("gather=%v", gather), func(b *testing.B) {
			host, hub := pairWith(b, gather)
			go host.Run(context.Background(), func(any) {})
			go hub.Run(context.Background(), func(any) {})
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
		})
	}
}

// BenchmarkResult sends a result message from the client side (the host's)
// and waits for the server side to have it, with and without FrameConn.
func BenchmarkResult(b *testing.B) {
	for _, gather := range []bool{false, true} {
		for _, n := range []int{1 << 10, 4400, 64 << 10} {
			b.Run(fmt.Sprintf("gather=%v/%d", gather, n), func(b *testing.B) {
				c, s := pairWith(b, gather)
				got := make(chan any, 1)
				go s.Run(context.Background(), func(m any) { got <- m })
				go c.Run(context.Background(), func(any) {})
				res := &proto.Result{OpID: "a", OK: true, Result: []byte(`"` + strings.Repeat("x", n) + `"`)}
				b.SetBytes(int64(n))
				for b.Loop() {
					if err := c.Send(context.Background(), res); err != nil {
						b.Fatal(err)
					}
					<-got
				}
			})
		}
	}
}
