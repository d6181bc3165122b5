// Package tests holds hermit's end-to-end tests: real guest programs (threads,
// processes, C, Go, Python, shell) run natively and under `hermit run`, and
// the checks of the `hermit run` command-line contract.
package tests

import (
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
)

func TestMain(m *testing.M) {
	testenv.Main(m)
}
