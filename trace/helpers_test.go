package trace_test

import (
	"io"
	"strings"

	"github.com/hermitdbg/hermit/trace"
)

var sameEvent = trace.SameEvent

func readerOf(s string) io.Reader { return strings.NewReader(s) }
