package httpapi

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/edit"
)

// guardFields are the body fields that make a change conditional or a
// preview, with what ignoring one would do. Bodies may carry fields a
// route does not know (AIO ignores them, and AIO clients send some), but
// ignoring one of these would make the change for real or unchecked: a
// misspelt expected_version would skip the version check, a dry_run sent
// to a route without dry runs would write. So misspelt uses them to refuse
// a body rather than ignore what it asked for.
var guardFields = map[string]string{
	"expected_version":  "the change would be made without the version check",
	"expected_versions": "the change would be made without the version checks",
	"dry_run":           "the change would be made for real",
}

// misspelt refuses the unknown top-level keys of a body that are a known
// field written another way (camelCase, kebab-case: "replaceMode" for
// replace_mode), or that are, or nearly are, a guard field (see
// guardFields): "expected_verison", or dry_run on a route without dry
// runs. Other unknown keys are left to the route's rules (ignored, as AIO
// does, or refused when strict); case variants to caseVariants.
func misspelt(known *fieldSet, fields map[string]json.RawMessage) []client.ValidationError {
	var errs []client.ValidationError
	for key := range fields {
		if known.names[key] {
			continue
		}
		if _, ok := known.fold(key); ok {
			continue // caseVariants refuses it
		}
		norm := normalName(key)
		if name, ok := known.normal(norm); ok {
			errs = append(errs, client.ValidationError{Location: []string{"body", key}, Type: "value_error.extra",
				Message: fmt.Sprintf("field %q is not %q: field names are snake_case", key, name)})
			continue
		}
		guard, ok := nearestGuard(norm)
		if !ok {
			continue
		}
		ignored := guardFields[guard]
		msg := fmt.Sprintf("this route takes no %q.", guard)
		switch {
		case key == guard:
		case known.names[guard]:
			msg = fmt.Sprintf("unknown field %q: did you mean %q?", key, guard)
		default:
			msg = fmt.Sprintf("unknown field %q: it looks like %q, which this route does not take either.", key, guard)
		}
		msg += fmt.Sprintf(" The request was refused: ignored, %s.", ignored)
		errs = append(errs, client.ValidationError{Location: []string{"body", key}, Type: "value_error.extra", Message: msg})
	}
	return errs
}

// nearestGuard returns the guard field within two edits of norm (a
// normalName), the nearest one (then the first by name) when several are.
func nearestGuard(norm string) (string, bool) {
	best, bestDist := "", 3
	for guard := range guardFields {
		d := edit.Distance(norm, normalName(guard))
		if d < bestDist || (d == bestDist && guard < best) {
			best, bestDist = guard, d
		}
	}
	return best, bestDist <= 2
}

// normalName is a field name without case, '_' and '-':
// expected_version, expectedVersion and Expected-Version are alike.
func normalName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// normal returns the field whose normalName is norm.
func (fs *fieldSet) normal(norm string) (string, bool) {
	for _, n := range fs.ordered {
		if normalName(n) == norm {
			return n, true
		}
	}
	return "", false
}
