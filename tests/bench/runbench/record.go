package main

import (
	"cmp"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hermitdbg/hermit/tests/internal/procrun"
)

// Targets of the record and replay modes.
const (
	targetRecordPerRun    = 1.3 // record ≤ 1.3× `hermit run`
	targetReplayPerRecord = 1.0 // replay ≤ record
)

// recording runs the record and replay modes: each run of a workload is
// recorded into a fresh trace directory, replayed from it, measured and
// removed.
type recording struct {
	hermitBin string
	trace     string // the trace directory of the current run
	replay    bool   // `hermit replay --autopilot` works
}

// newRecording checks that `hermit record` (and `hermit replay
// --autopilot`) work, on /bin/true. If record does not, it returns nil and
// the reason; if only replay does not, the reason is returned with a
// recording that leaves replay out.
func newRecording(hermitBin, dir string, timeout time.Duration) (*recording, string) {
	rec := &recording{hermitBin: hermitBin, trace: filepath.Join(dir, "trace"), replay: true}
	recordArgv, replayArgv := rec.commands(workload{argv: []string{"/bin/true"}})
	defer rec.clean()
	if msg := probe(recordArgv, timeout); msg != "" {
		return nil, "n/a (`hermit record -- /bin/true` " + msg + ")"
	}
	if msg := probe(replayArgv, timeout); msg != "" {
		rec.replay = false
		return rec, "replay n/a (`hermit replay --autopilot` of /bin/true " + msg + ")"
	}
	return rec, ""
}

// probe runs argv and describes its failure, or returns "".
func probe(argv []string, timeout time.Duration) string {
	res, err := procrun.Run(exec.Command(argv[0], argv[1:]...), timeout)
	switch {
	case err != nil:
		return "failed: " + err.Error()
	case res.Exit != 0:
		return fmt.Sprintf("exited %d: %s", res.Exit, firstLine(res.Stderr))
	}
	return ""
}

// commands returns the record and replay commands of one run of wl; the
// replay command is nil if replay does not work.
func (rec *recording) commands(wl workload) (recordArgv, replayArgv []string) {
	recordArgv = append(append(append([]string{rec.hermitBin, "record", "-o", rec.trace}, wl.flags...), "--"), wl.argv...)
	if rec.replay {
		replayArgv = []string{rec.hermitBin, "replay", "--autopilot", rec.trace}
	}
	return recordArgv, replayArgv
}

// traceSize is the bytes of one trace: all its files, and its events file
// alone (the rest is mostly blobs of the files the guest used, a fixed cost).
type traceSize struct {
	total, events int64
}

// size measures the current trace.
func (rec *recording) size() traceSize {
	var s traceSize
	filepath.WalkDir(rec.trace, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				s.total += fi.Size()
				if p == filepath.Join(rec.trace, "events") {
					s.events = fi.Size()
				}
			}
		}
		return nil
	})
	return s
}

// clean removes the current trace. A nil recording has none.
func (rec *recording) clean() {
	if rec != nil {
		os.RemoveAll(rec.trace)
	}
}

// recordRow formats one row of the record and replay table.
func recordRow(wl workload, ms [nmodes]measurement, sizes []traceSize) string {
	nat, natOK := median(ms[native])
	run, runOK := median(ms[hermit])
	rec, recOK := median(ms[record])
	rep, repOK := median(ms[replay])
	cells := []string{wl.name, timeCell(ms[native]), timeCell(ms[hermit]),
		timeCell(ms[record]), ratioCell(rec, nat, recOK && natOK), ratioCell(rec, run, recOK && runOK),
		targetCell(targetRecordPerRun, rec, run, recOK && runOK)}
	if ms[replay].err == nil && len(ms[replay].times) == 0 {
		cells = append(cells, "n/a", "–", "–", "–", "–")
	} else {
		cells = append(cells, timeCell(ms[replay]), ratioCell(rep, nat, repOK && natOK), ratioCell(rep, run, repOK && runOK),
			ratioCell(rep, rec, repOK && recOK), targetCell(targetReplayPerRecord, rep, rec, repOK && recOK))
	}
	size, events, rate := "–", "–", "–"
	if len(sizes) > 0 {
		s := slices.Clone(sizes)
		slices.SortFunc(s, func(a, b traceSize) int { return cmp.Compare(a.total, b.total) })
		m := s[len(s)/2]
		size, events = bytesCell(float64(m.total)), bytesCell(float64(m.events))
		if natOK {
			rate = bytesCell(float64(m.total)/nat.Seconds()) + "/s"
		}
	}
	return "| " + strings.Join(append(cells, size, events, rate), " | ") + " |"
}

func ratioCell(d, base time.Duration, ok bool) string {
	if !ok || base <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", d.Seconds()/base.Seconds())
}

func bytesCell(n float64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f B", n)
}

// printRecordTable prints the record and replay rows, or why there are none.
func printRecordTable(w io.Writer, rec *recording, note string, rows []string) {
	fmt.Fprintf(w, "\n## hermit record and replay\n\n")
	if rec == nil {
		fmt.Fprintf(w, "record and replay: %s\n", note)
		return
	}
	fmt.Fprintf(w, "Measured in the same runs as the table above, interleaved with its modes: `hermit record -o DIR [flags] -- CMD`, then `hermit replay --autopilot DIR` of that trace. Wall time of the whole command, median. Targets: record ≤ %.2f× run, replay ≤ record. Trace: bytes of the trace directory (median run), of which the events file (the rest is mostly the files the guest used, stored once), and the trace bytes per second of the native run's wall time.", targetRecordPerRun)
	if note != "" {
		fmt.Fprintf(w, " %s.", note)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workload | native | run | record | record ×native | record ×run | target | replay | replay ×native | replay ×run | replay ×record | target | trace | events file | trace per native second |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintln(w, r)
	}
}
