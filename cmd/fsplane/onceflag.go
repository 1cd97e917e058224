package main

import (
	"fmt"
	"strconv"
	"strings"
)

// onceValue is a string flag that may be given only once (see check).
// pflag keeps the last of a repeated string flag silently, so "apply
// --root a --root b" applied the patch under b, and "connect --root a
// --root b" served b alone, whichever the user meant.
type onceValue struct {
	value string
	given []string // every value on the command line, in order
}

func (o *onceValue) String() string { return o.value }
func (o *onceValue) Type() string   { return "string" }

func (o *onceValue) Set(v string) error {
	o.value, o.given = v, append(o.given, v)
	return nil
}

// check refuses the flag named name given more than once; why says why it
// takes one value.
func (o *onceValue) check(name, why string) error {
	if len(o.given) < 2 {
		return nil
	}
	return fmt.Errorf("--%s given %d times (%s): %s; give it once", name, len(o.given), strings.Join(quoteAll(o.given), ", "), why)
}

// quoteAll quotes each of vs as a Go string.
func quoteAll(vs []string) []string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return q
}
