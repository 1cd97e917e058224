// Command relayfloor measures what any hub-and-host design costs on this
// machine, without fsplane: an HTTP handler that answers at once (/local)
// against one that first relays a message over a WebSocket to a second
// process and waits for its echo (/relay). bench/connector.sh runs it next
// to the real hub so its ratio can be read against this floor.
//
//	relayfloor serve ADDR    # the HTTP side; the echo process dials ADDR/ws
//	relayfloor echo ADDR
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "relayfloor:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return errors.New("usage: relayfloor serve|echo ADDR")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1])
	case "echo":
		return echo(ctx, args[1])
	}
	return fmt.Errorf("unknown mode %q: use serve or echo", args[0])
}

// echo sends back every message it reads, from the reading goroutine; a
// message "reply=N" is answered with N bytes instead (what a relayed read
// of N bytes must at least carry back). Each answer leaves in one write to
// the network, as fsplane's host sends its results (connector.FrameConn):
// the library's 4 KiB write buffer would otherwise split a 4 KiB answer in
// two writes and often wake the reader twice, a cost no hub has to pay.
func echo(ctx context.Context, addr string) error {
	var gc *gatherConn
	var d net.Dialer
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			gc = &gatherConn{Conn: c}
			return gc, nil
		},
	}}
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		return err
	}
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			return nil
		}
		if n, ok := strings.CutPrefix(string(data), "reply="); ok {
			size, _ := strconv.Atoi(n)
			data = bytes.Repeat([]byte("x"), max(size, 0))
		}
		gc.hold()
		err = ws.Write(ctx, typ, data)
		if ferr := gc.release(); err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
	}
}

// gatherConn gathers the writes made between hold and release into one.
// Only echo's goroutine writes (there are no pings here), so it needs no
// lock.
type gatherConn struct {
	net.Conn
	holding bool
	buf     []byte
}

func (c *gatherConn) Write(p []byte) (int, error) {
	if !c.holding {
		return c.Conn.Write(p)
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

func (c *gatherConn) hold() { c.holding = true }

func (c *gatherConn) release() error {
	c.holding = false
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// serve answers /local with 4 KiB at once and /relay with the same 4 KiB
// after a 200-byte round trip to the echo process (one at a time);
// /relay?reply=N has the echo process answer with N bytes.
func serve(ctx context.Context, addr string) error {
	body := []byte(strings.Repeat("x", 4096))
	var (
		mu      sync.Mutex
		peer    *websocket.Conn
		ready   = make(chan struct{})
		replies = make(chan struct{}, 1)
	)
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		peer = ws
		close(ready)
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
			replies <- struct{}{}
		}
	})
	mux.HandleFunc("/local", func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	mux.HandleFunc("/relay", func(w http.ResponseWriter, r *http.Request) {
		<-ready
		msg := body[:200]
		if n := r.URL.Query().Get("reply"); n != "" {
			msg = []byte("reply=" + n)
		}
		mu.Lock()
		err := peer.Write(ctx, websocket.MessageText, msg)
		if err == nil {
			<-replies
		}
		mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.Write(body)
	})
	mux.HandleFunc("/ready", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-ready:
		default:
			http.Error(w, "no echo process yet", http.StatusServiceUnavailable)
		}
	})
	return http.ListenAndServe(addr, mux)
}
