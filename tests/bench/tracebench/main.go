// Command tracebench measures the trace format on a realistic stream of
// system call events (see tracetest.Stream) and prints a markdown table:
// bytes per event, and encode and decode speed in events per second.
//
// Run it with "go run ./tests/bench/tracebench" (make bench does).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/hermitdbg/hermit/trace"
	"github.com/hermitdbg/hermit/trace/tracetest"
)

// Targets from the trace format issue. A ptrace stop costs microseconds, so
// a recorder makes well under a million stops a second; an encoder faster
// than that never bounds recording.
const (
	targetBytesPerEvent = 4.0
	targetDecode        = 5e6
	targetEncode        = 1e6
)

type result struct {
	name       string
	events     int
	fileBytes  int64   // events file
	rawBytes   uint64  // encoded events before compression
	encode     float64 // events/s, best run
	decode     float64 // events/s, best run
	allocPerEv float64 // bytes allocated per event while writing
	heapGrowth uint64  // heap in use after writing, minus before
	blocks     uint64
}

func main() {
	n := flag.Int("n", 1_000_000, "events per stream")
	runs := flag.Int("runs", 3, "runs per measurement; the best counts")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "tracebench")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)

	free := measure(tmp, "payload-free system calls", false, *n, *runs)
	full := measure(tmp, "with 0-64 byte outputs", true, *n, *runs)

	fmt.Printf("## trace format: %d events per stream, best of %d runs (%s, %d CPUs)\n\n", *n, *runs, runtime.Version(), runtime.NumCPU())
	fmt.Println("| stream | bytes/event | encoded bytes/event | compression | encode events/s | decode events/s | writer alloc/event |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range []result{free, full} {
		fmt.Printf("| %s | %.2f | %.2f | %.2fx | %s | %s | %.2f B |\n", r.name,
			float64(r.fileBytes)/float64(r.events), float64(r.rawBytes)/float64(r.events),
			float64(r.rawBytes)/float64(r.fileBytes), rate(r.encode), rate(r.decode), r.allocPerEv)
	}
	fmt.Println()
	ok := true
	check := func(what string, got, target float64, better string, pass bool) {
		verdict := "met"
		if !pass {
			verdict, ok = "MISSED", false
		}
		fmt.Printf("- %s: %s (target %s %s): %s\n", what, fmtNum(got), better, fmtNum(target), verdict)
	}
	bpe := float64(free.fileBytes) / float64(free.events)
	check("bytes per payload-free event", bpe, targetBytesPerEvent, "≤", bpe <= targetBytesPerEvent)
	minDecode := min(free.decode, full.decode)
	check("decode events/s (slower stream)", minDecode, targetDecode, "≥", minDecode >= targetDecode)
	minEncode := min(free.encode, full.encode)
	check("encode events/s (slower stream)", minEncode, targetEncode, "≥", minEncode >= targetEncode)
	fmt.Printf("- rr spends about 5.5 bytes per event; the payload-free stream here takes %.0f%% of that\n", 100*bpe/5.5)
	fmt.Printf("- writer heap growth over %d events: %s and %s\n", *n, mib(free.heapGrowth), mib(full.heapGrowth))
	if !ok {
		os.Exit(1)
	}
}

func measure(tmp, name string, payloads bool, n, runs int) result {
	r := result{name: name, events: n}
	for i := range runs {
		dir := filepath.Join(tmp, fmt.Sprintf("%v-%d", payloads, i))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := tracetest.NewStream(1, payloads)
		var ev trace.Event
		start := time.Now()
		w, err := trace.Create(dir, trace.Header{Hermit: "tracebench", Argv: []string{"server"}})
		if err != nil {
			fail(err)
		}
		for range n {
			s.Next(&ev)
			if err := w.Append(&ev); err != nil {
				fail(err)
			}
		}
		runtime.ReadMemStats(&after)
		if err := w.Close(); err != nil {
			fail(err)
		}
		r.encode = max(r.encode, float64(n)/time.Since(start).Seconds())
		r.allocPerEv = float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
		r.heapGrowth = max(r.heapGrowth, after.HeapInuse-min(after.HeapInuse, before.HeapInuse))

		start = time.Now()
		rd, err := trace.Open(dir)
		if err != nil {
			fail(err)
		}
		got := 0
		for range rd.Events() {
			got++
		}
		if rd.Err() != nil || got != n {
			fail(fmt.Errorf("read back %d of %d events: %v", got, n, rd.Err()))
		}
		r.decode = max(r.decode, float64(n)/time.Since(start).Seconds())
		st, _ := rd.IndexStats()
		r.fileBytes, r.rawBytes, r.blocks = int64(st.FileBytes), st.RawBytes, st.Blocks
		rd.Close()
		os.RemoveAll(dir)
	}
	return r
}

func rate(v float64) string { return fmt.Sprintf("%.1fM", v/1e6) }

func fmtNum(v float64) string {
	if v >= 1e6 {
		return rate(v)
	}
	return fmt.Sprintf("%.2f", v)
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tracebench:", err)
	os.Exit(1)
}
