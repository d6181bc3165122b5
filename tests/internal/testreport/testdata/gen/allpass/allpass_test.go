package allpass

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	fmt.Fprintln(os.Stderr, "testmain: stderr note")
	os.Exit(code)
}

func TestA(t *testing.T) {}

func TestB(t *testing.T) {
	t.Run("x", func(t *testing.T) {})
	t.Run("y", func(t *testing.T) { t.Skip("multi\nline reason") })
}
