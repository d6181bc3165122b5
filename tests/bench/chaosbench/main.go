// Command chaosbench measures how fast hermit chaos searches: runs per
// second of a small two-thread guest (20 writes to /dev/null each, under a
// lock, so that no schedule fails) natively, under plain `hermit run`
// one after another, and under `hermit chaos --jobs 1` and `--jobs 2`,
// which the last column compares with each other.
//
// Usage (after `make build`): go run ./tests/bench/chaosbench [-hermit bin/hermit] [-runs 200]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/hermitdbg/hermit/tests/bench/internal/cguest"
)

const guest = `#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int fd, counter;
static void *work(void *arg) {
	for (int i = 0; i < 20; i++) {
		pthread_mutex_lock(&mu);
		int v = counter;
		write(fd, "x", 1);
		counter = v + 1;
		pthread_mutex_unlock(&mu);
	}
	return arg;
}
int main(void) {
	fd = open("/dev/null", O_WRONLY);
	pthread_t a, b;
	pthread_create(&a, 0, work, 0);
	pthread_create(&b, 0, work, 0);
	pthread_join(a, 0);
	pthread_join(b, 0);
	return counter != 40;
}
`

func main() {
	hermit := flag.String("hermit", "bin/hermit", "the hermit binary")
	runs := flag.Int("runs", 200, "runs (seeds) per row")
	flag.Parse()
	if err := run(*hermit, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "chaosbench:", err)
		os.Exit(1)
	}
}

func run(hermit string, runs int) error {
	work, bin, ok, err := cguest.Build("chaosbench", guest)
	if !ok {
		return err
	}
	defer os.RemoveAll(work)
	env := append(os.Environ(), "HERMIT_CACHE_DIR="+filepath.Join(work, "cache"), "HERMIT_TRACE_DIR="+work)
	sequential := func(name string, args ...string) (time.Duration, error) {
		start := time.Now()
		for range runs {
			c := exec.Command(name, args...)
			c.Env = env
			if out, err := c.CombinedOutput(); err != nil {
				return 0, fmt.Errorf("%s %v: %v\n%s", name, args, err, out)
			}
		}
		return time.Since(start), nil
	}
	chaos := func(jobs int) (time.Duration, error) {
		start := time.Now()
		c := exec.Command(hermit, "chaos", "--runs", strconv.Itoa(runs), "--jobs", strconv.Itoa(jobs), "--no-record", "--", bin)
		c.Env = env
		if out, err := c.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("hermit chaos --jobs %d: %v (a seed failed?)\n%s", jobs, err, out)
		}
		return time.Since(start), nil
	}
	native, err := sequential(bin)
	if err != nil {
		return err
	}
	plain, err := sequential(hermit, "run", "--", bin)
	if err != nil {
		return err
	}
	pct, err := sequential(hermit, "run", "--chaos", "--seed", "7", "--", bin)
	if err != nil {
		return err
	}
	one, err := chaos(1)
	if err != nil {
		return err
	}
	two, err := chaos(2)
	if err != nil {
		return err
	}
	perSec := func(d time.Duration) float64 { return float64(runs) / d.Seconds() }
	fmt.Printf("\n### hermit chaos: %d runs of a 2-thread guest (%d CPUs)\n\n", runs, runtime.NumCPU())
	fmt.Println("| how | runs/s | × native time per run |")
	fmt.Println("|---|---|---|")
	for _, r := range []struct {
		name string
		d    time.Duration
	}{
		{"native, one after another", native},
		{"hermit run, one after another", plain},
		{"hermit run --chaos, one after another", pct},
		{"hermit chaos --jobs 1", one},
		{"hermit chaos --jobs 2", two},
	} {
		fmt.Printf("| %s | %.1f | %.1f× |\n", r.name, perSec(r.d), r.d.Seconds()/native.Seconds())
	}
	fmt.Printf("\nspeedup of --jobs 2 over --jobs 1: %.2f×\n", one.Seconds()/two.Seconds())
	return nil
}
