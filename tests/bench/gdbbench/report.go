package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// printTable prints the medians, ratios and goals, then what the counting
// sessions saw and any warnings.
func printTable(w io.Writer, c config, gs, hm *side) {
	fmt.Fprintln(w, "| workload | gdbserver | hermit | ratio (hermit/gdbserver) | goal |")
	fmt.Fprintln(w, "|---|---|---|---|---|")

	rate := func(s *side) (float64, string, bool) {
		d, ok := median(s.steps)
		if !ok {
			return 0, cellWhyNot(s), false
		}
		r := float64(c.steps) / d.Seconds()
		return r, fmt.Sprintf("%.0f steps/s (%.1f µs/step)", r, d.Seconds()*1e6/float64(c.steps)), true
	}
	gr, gcell, gok := rate(gs)
	hr, hcell, hok := rate(hm)
	ratio, goal := "–", fmt.Sprintf("≥ %.2f×", goalStepRate)
	if gok && hok {
		ratio = fmt.Sprintf("%.2f× the rate", hr/gr)
		goal += verdict(hr/gr >= goalStepRate)
	}
	fmt.Fprintf(w, "| stepi rate: `stepi %d` in a busy loop | %s | %s | %s | %s |\n", c.steps, gcell, hcell, ratio, goal)

	trip := func(s *side) (float64, string, bool) {
		d, ok := median(s.hits)
		if !ok {
			return 0, cellWhyNot(s), false
		}
		us := d.Seconds() * 1e6 / float64(c.hits)
		return us, fmt.Sprintf("%.1f µs", us), true
	}
	gt, gcell, gok := trip(gs)
	ht, hcell, hok := trip(hm)
	ratio, goal = "–", fmt.Sprintf("≤ %.2f×", goalRoundTrip)
	if gok && hok {
		ratio = fmt.Sprintf("%.2f× the time", ht/gt)
		goal += verdict(ht/gt <= goalRoundTrip)
	}
	fmt.Fprintf(w, "| breakpoint round trip: %d hits continued through with an ignore count | %s | %s | %s | %s |\n", c.hits, gcell, hcell, ratio, goal)

	fmt.Fprintln(w)
	for _, s := range []*side{gs, hm} {
		if s.counts != nil {
			fmt.Fprintf(w, "%s, counted by a proxy in one extra untimed session: %s\n", s.name, countsLine(s.counts, c))
		}
	}
	for _, s := range []*side{gs, hm} {
		for _, warn := range s.warns {
			fmt.Fprintf(w, "warning: %s: %s\n", s.name, warn)
		}
	}
}

func verdict(met bool) string {
	if met {
		return " met"
	}
	return " **missed**"
}

// cellWhyNot is the cell of a side without a median.
func cellWhyNot(s *side) string {
	switch {
	case s.note != "":
		return "n/a"
	case s.err != nil:
		return "error: " + strings.ReplaceAll(firstLine([]byte(s.err.Error())), "|", "/")
	}
	return "–"
}

// countsLine says how many stops and packets each timed command took.
func countsLine(k *counts, c config) string {
	st, rt := k.stepping, k.roundTrips
	line := fmt.Sprintf("`stepi %d`: %d stops, %d stepping resumes, %d packets from gdb (%.1f per step); %d round trips: %d stops (%.2f per round trip), %d stepping + %d continuing resumes, %d packets from gdb (%.1f per round trip)",
		c.steps, st.stops, st.steps, st.packets, float64(st.packets)/float64(c.steps),
		c.hits, rt.stops, float64(rt.stops)/float64(c.hits), rt.steps, rt.conts, rt.packets, float64(rt.packets)/float64(c.hits))
	other := append(st.other, rt.other...)
	if len(other) > 0 {
		if len(other) > 5 {
			other = append(other[:5], "...")
		}
		line += "; also " + strings.Join(other, ", ")
	}
	return line
}

func median(ds []time.Duration) (time.Duration, bool) {
	if len(ds) == 0 {
		return 0, false
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], true
}
