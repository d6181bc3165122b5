package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/hermitdbg/hermit/trace"
)

const cacheUsage = `Usage:
  hermit cache info     show the cache: its path, size, entries and limit
  hermit cache clean    empty the cache, but for what running hermits use

hermit's cache holds the blobs of recorded files, so that recording a file
again does not store it again, and the replay roots rebuilt from traces,
so that replaying a trace again does not rebuild its files. Traces do not
need it: they hold their own links to their blobs.

The cache is $HERMIT_CACHE_DIR, else $XDG_CACHE_HOME/hermit, else
~/.cache/hermit. Here it is %s.

After each record and replay, hermit trims the cache to $HERMIT_CACHE_MAX
bytes (a number, or with a K, M or G suffix: 500M, 4G; 0 for no limit;
default 4G), removing least recently used entries first. Roots that a
running replay or debugging session uses are never removed, by a trim or
by clean, even over the limit.
`

// cacheMain runs "hermit cache ARGS..." and returns the exit status.
func cacheMain(args []string) int {
	return runCache(args, os.Stdout, os.Stderr)
}

// runCache is cacheMain with its output streams as arguments.
func runCache(args []string, stdout, stderr io.Writer) int {
	dir := trace.DefaultCacheDir()
	if len(args) == 0 {
		fmt.Fprintf(stderr, cacheUsage, dir)
		return 2
	}
	switch args[0] {
	case "info":
		if code, done := cacheFlags("info", "Show hermit's cache: its path, its size on disk, its entries by kind\nand its size limit ($HERMIT_CACHE_MAX).", args[1:], stdout, stderr); done {
			return code
		}
		return cacheInfo(dir, stdout, stderr)
	case "clean":
		if code, done := cacheFlags("clean", "Remove every entry of hermit's cache that no running hermit uses: blobs\nof recorded files and replay roots. Traces keep their own copies.", args[1:], stdout, stderr); done {
			return code
		}
		return cacheClean(dir, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprintf(stdout, cacheUsage, dir)
		return 0
	}
	fmt.Fprintf(stderr, "hermit cache: unknown command %q (commands: info, clean)\n", args[0])
	return 2
}

// cacheFlags parses the (no) flags and arguments of "hermit cache CMD".
func cacheFlags(cmd, doc string, args []string, stdout, stderr io.Writer) (int, bool) {
	name := "hermit cache " + cmd
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "Usage: %s\n\n%s\n\nThe cache is %s.\n", name, doc, trace.DefaultCacheDir())
		return 0, true
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", name, err)
		return 2, true
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "%s: unexpected argument %q (see --help)\n", name, fs.Arg(0))
		return 2, true
	}
	return 0, false
}

func cacheInfo(dir string, stdout, stderr io.Writer) int {
	limit, err := trace.CacheMax()
	if err != nil {
		fmt.Fprintf(stderr, "hermit: warning: %v\n", err)
	}
	ci, err := trace.ReadCacheInfo(dir)
	if err != nil {
		fmt.Fprintf(stderr, "hermit cache info: %v\n", err)
		return 1
	}
	lim := "none"
	if limit > 0 {
		lim = humanBytes(limit)
	}
	tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "path\t%s\n", ci.Dir)
	fmt.Fprintf(tw, "size\t%s (%d bytes)\n", humanBytes(ci.Bytes), ci.Bytes)
	fmt.Fprintf(tw, "limit\t%s\n", lim)
	for _, k := range trace.CacheKinds {
		c := ci.Kinds[k]
		line := fmt.Sprintf("%s\t%d", k, c.Entries)
		if k != trace.CacheKeys {
			line += ", " + humanBytes(c.Bytes)
		}
		if k == trace.CacheRoots && ci.InUse > 0 {
			line += fmt.Sprintf(" (%d in use)", ci.InUse)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	return 0
}

func cacheClean(dir string, stdout, stderr io.Writer) int {
	before, err := trace.ReadCacheInfo(dir)
	if err != nil {
		fmt.Fprintf(stderr, "hermit cache clean: %v\n", err)
		return 1
	}
	after, err := trace.TrimCache(dir, -1)
	if err != nil {
		fmt.Fprintf(stderr, "hermit cache clean: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "removed %s from %s", humanBytes(max(before.Bytes-after.Bytes, 0)), dir)
	if after.Bytes > 0 {
		fmt.Fprintf(stdout, "; %s left", humanBytes(after.Bytes))
		if after.InUse > 0 {
			fmt.Fprintf(stdout, " (%d roots in use by running hermits)", after.InUse)
		}
	}
	fmt.Fprintln(stdout)
	return 0
}

// trimmed trims hermit's cache to its limit ($HERMIT_CACHE_MAX) once a
// command that filled it is over, and returns the command's exit status.
// Problems are warnings.
func trimmed(code int) int {
	limit, err := trace.CacheMax()
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit: warning: %v\n", err)
	}
	if limit == 0 {
		return code
	}
	if _, err := trace.TrimCache(trace.DefaultCacheDir(), limit); err != nil {
		fmt.Fprintf(os.Stderr, "hermit: warning: trimming the cache: %v\n", err)
	}
	return code
}
