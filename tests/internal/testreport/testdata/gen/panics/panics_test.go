package panics

import "testing"

func TestOK(t *testing.T) {}

func TestPanic(t *testing.T) {
	t.Log("before panic")
	var m map[string]int
	m["x"] = 1
}
