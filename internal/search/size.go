package search

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseSize parses a file size the way ripgrep's --max-filesize and AIO's
// max_file_size do: a non-negative integer, optionally followed by K, M or
// G (binary multiples, case-insensitive, an optional trailing "B" or
// "iB" allowed: "1M", "500K", "2MiB", "4096"). Surrounding spaces are
// ignored. It returns the size in bytes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("invalid size %q: empty", s)
	}
	up := strings.ToUpper(t)
	up = strings.TrimSuffix(up, "IB")
	if len(up) < len(t) && !strings.HasSuffix(up, "K") && !strings.HasSuffix(up, "M") && !strings.HasSuffix(up, "G") {
		return 0, fmt.Errorf("invalid size %q: iB needs a unit (K, M or G)", s)
	}
	if len(up) == len(t) && len(up) > 1 && strings.HasSuffix(up, "B") {
		up = up[:len(up)-1]
	}
	mult := int64(1)
	switch {
	case strings.HasSuffix(up, "K"):
		mult, up = 1<<10, up[:len(up)-1]
	case strings.HasSuffix(up, "M"):
		mult, up = 1<<20, up[:len(up)-1]
	case strings.HasSuffix(up, "G"):
		mult, up = 1<<30, up[:len(up)-1]
	}
	if up == "" {
		return 0, fmt.Errorf("invalid size %q: no number", s)
	}
	for i := 0; i < len(up); i++ {
		if up[i] < '0' || up[i] > '9' {
			return 0, fmt.Errorf("invalid size %q: want a number with an optional K, M or G suffix", s)
		}
	}
	n, err := strconv.ParseInt(up, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return n * mult, nil
}
