package host

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/connector/host/hosttest"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// TestHostDecidesOwnerAndMode: a write's owner and permissions are the
// host's, whatever the hub's raw args say. A host running as root once
// created files (and their parents) owned by the account the hub named,
// and world-writable ones ignoring its umask.
func TestHostDecidesOwnerAndMode(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{})
	f := setup(t, hub, proto.ReadWrite, nil, nil)
	tests := []struct {
		name, path, args string
	}{
		{"owner", "u/new/a.txt", `{"Content":"aGkK","User":"nobody"}`},
		{"numeric owner", "n/new/a.txt", `{"Content":"aGkK","User":"65534"}`},
		{"world-writable", "w.txt", `{"Content":"aGkK","Mode":511}`},
		{"setuid", "s.txt", `{"Content":"aGkK","Mode":` + modeJSON(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky|0o755) + `}`},
		{"both", "b/c.txt", `{"Content":"aGkK","Mode":511,"User":"root"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.do(t, &proto.Op{Op: proto.OpWrite, Path: tt.path, Args: json.RawMessage(tt.args)})
			if !r.OK {
				t.Fatalf("write failed: %+v", r.Error)
			}
			fi, err := os.Stat(filepath.Join(f.root, tt.path))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != 0o644 {
				t.Errorf("mode %v, want -rw-r--r-- as a local write makes it", fi.Mode())
			}
			for p := tt.path; p != "."; p = filepath.Dir(p) {
				fi, err := os.Lstat(filepath.Join(f.root, p))
				if err != nil {
					t.Fatal(err)
				}
				if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Getuid() || int(st.Gid) != os.Getgid() {
					t.Errorf("%s is owned by %d:%d, want the host's %d:%d", p, st.Uid, st.Gid, os.Getuid(), os.Getgid())
				}
			}
		})
	}
}

func modeJSON(m fs.FileMode) string {
	b, _ := json.Marshal(m)
	return string(b)
}
