package mixed

import "testing"

func TestPass(t *testing.T) { t.Log("just a log line") }

func TestFail(t *testing.T) {
	t.Log("about to fail")
	t.Errorf("got %d, want %d", 1, 2)
}

func TestSkip(t *testing.T) { t.Skip("needs root") }

func TestSkipNoReason(t *testing.T) { t.SkipNow() }

func TestSkipf(t *testing.T) { t.Skipf("tool %q not in PATH", "gdb") }

func TestSubs(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("skipped", func(t *testing.T) { t.Skip("only on arm64") })
	t.Run("bad", func(t *testing.T) {
		t.Log("subtest detail")
		t.Fatal("subtest broke")
	})
	t.Run("nested", func(t *testing.T) {
		t.Run("deep", func(t *testing.T) { t.Skip("deep skip") })
	})
}

func TestParallel(t *testing.T) {
	for _, n := range []string{"a", "b"} {
		t.Run(n, func(t *testing.T) {
			t.Parallel()
			if n == "b" {
				t.Skip("parallel skip")
			}
		})
	}
}
