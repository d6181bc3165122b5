package hang

import (
	"testing"
	"time"
)

func TestQuick(t *testing.T) { t.Skip("not today") }

func TestHang(t *testing.T) {
	t.Log("waiting forever")
	time.Sleep(time.Hour)
}
