package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/applytest"
	"github.com/fsplane/fsplane/internal/testenv"
)

// testCert is a self-signed certificate for 127.0.0.1 and localhost,
// written to PEM files as an operator would pass them.
type testCert struct {
	certFile, keyFile string
	pool              *x509.CertPool // trusts the certificate
}

// newTestCert makes a self-signed ECDSA certificate in dir.
func newTestCert(t *testing.T, dir, name string) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "fsplane test hub"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := testCert{certFile: filepath.Join(dir, name+"-cert.pem"), keyFile: filepath.Join(dir, name+"-key.pem"), pool: x509.NewCertPool()}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(c.certFile, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	c.pool.AppendCertsFromPEM(certPEM)
	return c
}

// httpsClient trusts pool only. HTTP/2 is not attempted, as with any
// http.Transport given its own TLS config.
func httpsClient(pool *x509.CertPool) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// TestServeTLS runs the real binary with --tls-cert and --tls-key: the
// API, /mcp and the connector answer over TLS to a client that trusts
// the certificate, a client that does not is refused at the handshake,
// and nothing is answered in clear text.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	cert := newTestCert(t, t.TempDir(), "hub")
	s := startServer(t, t.TempDir(), "--connector-token", hubToken, "--tls-cert", cert.certFile, "--tls-key", cert.keyFile)
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("the start line says %s, not https://", s.url)
	}
	trusted := httpsClient(cert.pool)

	t.Run("trusted client", func(t *testing.T) {
		resp, err := trusted.Get(s.url + "/v2/fs/list?path=.")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
			t.Errorf("status %d, TLS %+v", resp.StatusCode, resp.TLS)
		}
	})

	t.Run("untrusted client", func(t *testing.T) {
		// The system's roots only: a self-signed certificate is unknown.
		_, err := (&http.Client{Transport: &http.Transport{}}).Get(s.url + "/v2/fs/list?path=.")
		if _, ok := errors.AsType[*tls.CertificateVerificationError](err); !ok {
			t.Errorf("without the CA: %v, want a certificate verification error", err)
		}
	})

	t.Run("TLS 1.1 refused", func(t *testing.T) {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}}
		if _, err := (&http.Client{Transport: tr}).Get(s.url + "/health"); err == nil {
			t.Error("a TLS 1.1 client was served")
		}
	})

	t.Run("plain HTTP refused", func(t *testing.T) {
		resp, err := http.Get("http://" + strings.TrimPrefix(s.url, "https://") + "/v2/fs/list?path=.")
		if err != nil {
			return // the connection was closed: nothing was served either
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || strings.Contains(string(body), "success") {
			t.Errorf("plain HTTP got %d: %s", resp.StatusCode, body)
		}
	})

	t.Run("MCP", func(t *testing.T) {
		c := mcp.NewClient(&mcp.Implementation{Name: "tls-test", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: trusted, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if _, err := cs.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("connect over wss", func(t *testing.T) {
		c, err := client.New(s.url, client.WithHTTPClient(trusted))
		if err != nil {
			t.Fatal(err)
		}
		h := &hubAndHost{hub: s, c: c, roots: map[string]string{}, hosts: map[string]*connectProc{},
			connectArgs: []string{"--ca-file", cert.certFile}}
		h.connect(t, "laptop", "read-only", map[string]string{"notes.txt": "over tls\n"})
		got, err := c.Host("laptop").Read(context.Background(), client.ReadQuery{Path: "notes.txt"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Content != "over tls\n" {
			t.Errorf("read through the host: %q", got.Content)
		}
		if e := h.hosts["laptop"].stderr.String(); strings.Contains(e, "warning") {
			t.Errorf("fsplane connect warns over TLS: %s", e)
		}
	})
}

// TestServeTLSFlags: --tls-cert and --tls-key come together, and a pair
// that cannot serve fails at start with the file at fault and what to
// do.
func TestServeTLSFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := newTestCert(t, dir, "a"), newTestCert(t, dir, "b")
	missing := filepath.Join(dir, "missing.pem")
	encrypted := filepath.Join(dir, "encrypted.pem")
	if err := os.WriteFile(encrypted, pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte("opaque")}), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  []string
		args []string
		exit int
		want []string
	}{
		{"cert without key", nil, []string{"--tls-cert", a.certFile}, 2,
			[]string{"fsplane serve: --tls-cert is set without --tls-key: pass both"}},
		{"key without cert", nil, []string{"--tls-key", a.keyFile}, 2,
			[]string{"fsplane serve: --tls-key is set without --tls-cert: pass both"}},
		{"cert from the environment without key", []string{"FSPLANE_TLS_CERT=" + a.certFile}, nil, 2,
			[]string{"fsplane serve: FSPLANE_TLS_CERT (for --tls-cert) is set without --tls-key"}},
		{"cert file missing", nil, []string{"--tls-cert", missing, "--tls-key", a.keyFile}, 1,
			[]string{"cannot read the --tls-cert file " + missing + ": no such file or directory", "Hint: --tls-cert takes"}},
		{"key file unreadable", nil, []string{"--tls-cert", a.certFile, "--tls-key", dir}, 1,
			[]string{"cannot read the --tls-key file " + dir + ": is a directory", "Hint: --tls-key takes"}},
		{"key file from the environment missing", []string{"FSPLANE_TLS_CERT=" + a.certFile, "FSPLANE_TLS_KEY=" + missing}, nil, 1,
			[]string{"cannot read the FSPLANE_TLS_KEY (for --tls-key) file " + missing}},
		{"key given as the cert", nil, []string{"--tls-cert", a.keyFile, "--tls-key", a.keyFile}, 1,
			[]string{"the --tls-cert file " + a.keyFile + " holds no PEM certificate", "Hint: ", "openssl req -x509"}},
		{"cert given as the key", nil, []string{"--tls-cert", a.certFile, "--tls-key", a.certFile}, 1,
			[]string{"the --tls-key file " + a.certFile + " holds no PEM private key", "Hint: --tls-key takes"}},
		{"encrypted key", nil, []string{"--tls-cert", a.certFile, "--tls-key", encrypted}, 1,
			[]string{"the --tls-key file " + encrypted + " holds an encrypted private key", "openssl pkey -in " + encrypted}},
		{"key not matching the cert", nil, []string{"--tls-cert", a.certFile, "--tls-key", b.keyFile}, 1,
			[]string{"the --tls-key file " + b.keyFile + " does not fit the certificate in the --tls-cert file " + a.certFile,
				"private key does not match public key", "Hint: pass the private key the certificate was issued for"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"serve", "--listen", "127.0.0.1:0", "--state-dir", t.TempDir()}, tt.args...)
			got := runServeExpectingFailure(t, tt.env, args...)
			if got.Exit != tt.exit {
				t.Errorf("exit %d, want %d; stderr:\n%s", got.Exit, tt.exit, got.Stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, got.Stderr)
				}
			}
			if first, _, _ := strings.Cut(got.Stderr, "\n"); !errorLine.MatchString(first) {
				t.Errorf("the error's first line %q is not in the form \"fsplane serve: message\"", first)
			}
		})
	}
}

// runServeExpectingFailure runs the binary, which must exit by itself. One
// that starts serving instead is stopped after a minute (it exits at once
// when it fails as it should), so that a check it lacks fails the test
// rather than hanging it.
func runServeExpectingFailure(t *testing.T, env []string, args ...string) applytest.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("fsplane %s did not fail at start; stderr:\n%s", strings.Join(args, " "), errb.String())
	}
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return applytest.Outcome{Stdout: out.String(), Stderr: errb.String(), Exit: code}
}

// TestServeTLSHandshakeErrorsInTheLog: net/http's report of a failed
// handshake is a line of the server's log, in its format (it was printed
// by the log package, "2026/01/02 15:04:05 http: TLS handshake error …",
// among the key=value lines).
func TestServeTLSHandshakeErrorsInTheLog(t *testing.T) {
	t.Parallel()
	cert := newTestCert(t, t.TempDir(), "hub")
	s := startServer(t, t.TempDir(), "--tls-cert", cert.certFile, "--tls-key", cert.keyFile)
	resp, err := http.Get("http://" + strings.TrimPrefix(s.url, "https://") + "/health")
	if err == nil {
		resp.Body.Close()
	}
	testenv.WaitFor(t, 20*time.Second, "the handshake error in the log", func() bool {
		return strings.Contains(s.logs.String(), "TLS handshake error")
	})
	for line := range strings.Lines(s.logs.String()) {
		if strings.Contains(line, "TLS handshake error") && !strings.HasPrefix(line, "time=") {
			t.Errorf("the handshake error is not a line of the server's log: %q", line)
		}
	}
}
