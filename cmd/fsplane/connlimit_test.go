package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The wrapped connection keeps what net/http looks for on a *net.TCPConn.
var (
	_ io.ReaderFrom                   = (*limitConn)(nil)
	_ interface{ CloseWrite() error } = (*limitConn)(nil)
	_ syscall.Conn                    = (*limitConn)(nil)
)

// The descriptor limitConn exposes is the TCP connection's; a connection
// without one is reported, not faked.
func TestLimitConnSyscallConn(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := (&limitConn{Conn: c}).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	var n int
	var rerr error
	err = raw.Read(func(fd uintptr) bool {
		n, rerr = syscall.Read(int(fd), buf)
		return rerr != syscall.EAGAIN
	})
	if err != nil || rerr != nil || string(buf[:n]) != "hi" {
		t.Fatalf("read through the descriptor: %q, %v, %v", buf[:n], err, rerr)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, err := (&limitConn{Conn: a}).SyscallConn(); err == nil {
		t.Error("a pipe's limitConn claimed a descriptor")
	}
}

// TestLimitListener: past the cap, a new connection is accepted only once
// an open one closes, and it is then served.
func TestLimitListener(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	full := make(chan int, 10)
	var mu sync.Mutex
	accepted := 0
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				mu.Lock()
				accepted++
				mu.Unlock()
			}
		},
	}
	l := limitConns(ln, 2, func() {
		mu.Lock()
		full <- accepted
		mu.Unlock()
	})
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })

	get := func(c net.Conn) {
		t.Helper()
		c.SetDeadline(time.Now().Add(30 * time.Second)) // hang guard
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", ln.Addr().String()) // the kernel completes the handshake
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns = append(conns, c)
	}
	get(conns[0])
	get(conns[1])
	select {
	case n := <-full:
		if n != 2 {
			t.Fatalf("the cap was reached with %d connections accepted, want 2", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Accept did not wait for a slot with 2 connections open")
	}
	conns[0].Close()
	get(conns[2])
	mu.Lock()
	defer mu.Unlock()
	if accepted != 3 {
		t.Fatalf("%d connections accepted, want 3", accepted)
	}
}
