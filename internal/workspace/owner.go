package workspace

import (
	"errors"
	"os"
	"os/user"
	"strconv"

	"github.com/fsplane/fsplane/internal/fserr"
)

// Owner is the account that files and directories an operation creates
// are given (AIO's `user`): fsplane reads and writes with its own
// privileges and only chowns what it creates. Existing files keep their
// owner.
type Owner struct {
	UID, GID int
	Name     string // the account name, for messages
}

// LookupOwner resolves an account name (or, failing that, a numeric uid)
// to an Owner: uid and primary gid. "" returns nil, nil: the process's
// own account, no chown. It fails with bad_request "no such user: alice"
// for an unknown account, and, when the process does not run as root (by
// its real uid), with bad_request "cannot run as alice: …" for any
// account but its own, because only root can give files away and fsplane
// never writes under the wrong owner silently.
func LookupOwner(name string) (*Owner, error) {
	return lookupOwner(name, os.Getuid())
}

func lookupOwner(name string, uid int) (*Owner, error) {
	if name == "" {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if _, unknown := errors.AsType[user.UnknownUserError](err); unknown && isDigits(name) {
		u, err = user.LookupId(name)
	}
	if err != nil {
		_, byName := errors.AsType[user.UnknownUserError](err)
		_, byID := errors.AsType[user.UnknownUserIdError](err)
		if byName || byID {
			return nil, fserr.New(fserr.BadRequest, "", "", "no such user: %s", name)
		}
		e := fserr.New(fserr.IOError, "", "", "cannot look up user %s", name)
		e.Err = err
		return nil, e
	}
	o := &Owner{Name: u.Username}
	if o.UID, err = strconv.Atoi(u.Uid); err == nil {
		o.GID, err = strconv.Atoi(u.Gid)
	}
	if err != nil {
		return nil, fserr.New(fserr.BadRequest, "", "", "user %s has no numeric uid and gid", name)
	}
	if err := checkOwnerAs("", "", o, uid); err != nil {
		return nil, err
	}
	return o, nil
}

// checkOwner refuses an owner this process cannot give files to.
func checkOwner(op, path string, o *Owner) error {
	if err := checkOwnerAs(op, path, o, os.Getuid()); err != nil {
		return err
	}
	return nil
}

func checkOwnerAs(op, path string, o *Owner, uid int) *fserr.Error {
	switch {
	case o == nil:
		return nil
	case o.UID < 0 || o.GID < 0:
		return fserr.New(fserr.BadRequest, op, path, "owner uid %d, gid %d is not valid", o.UID, o.GID)
	case uid != 0 && o.UID != uid:
		name := o.Name
		if name == "" {
			name = "uid " + strconv.Itoa(o.UID)
		}
		return fserr.New(fserr.BadRequest, op, path,
			"cannot run as %s: fsplane is running as uid %d and only root can change identity", name, uid).
			WithHint("omit user, or run fsplane as root")
	}
	return nil
}

// chownNew gives rel, which this package just created, to owner (the
// link itself when rel is a symbolic link). A nil owner leaves it alone.
func chownNew(root *os.Root, rel string, owner *Owner) error {
	if owner == nil {
		return nil
	}
	return root.Lchown(rel, owner.UID, owner.GID)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
