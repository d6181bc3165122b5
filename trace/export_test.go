package trace

import (
	"os"
	"path/filepath"
)

// Exports for the external tests.

// SameEvent reports whether two events hold the same values.
var SameEvent = sameEvent

// BlockSpan is a block's place in the events file.
type BlockSpan struct {
	Off, End     int64
	First, Count uint64
}

// Blocks lists the blocks of an intact events file.
func Blocks(dir string) ([]BlockSpan, error) {
	b, err := os.ReadFile(filepath.Join(dir, eventsFile))
	if err != nil {
		return nil, err
	}
	var out []BlockSpan
	for off := int64(0); off < int64(len(b)); {
		h, err := parseBlockHeader(b[off:])
		if err != nil {
			return nil, err
		}
		out = append(out, BlockSpan{Off: off, End: off + h.size(), First: h.first, Count: uint64(h.count)})
		off += h.size()
	}
	return out, nil
}

// Normalize returns a canonical deep copy of ev, for comparisons.
var Normalize = normalize
