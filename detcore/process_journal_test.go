package detcore_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/detcoretest"
)

// procJournal is a scriptJournal that also hears of processes.
type procJournal struct {
	scriptJournal
	events []string
}

func (j *procJournal) Exec(tid, vtid int) error {
	j.events = append(j.events, fmt.Sprintf("exec %d", vtid))
	return nil
}

func (j *procJournal) Clone(vtid, child int, flags uint64) {
	j.events = append(j.events, fmt.Sprintf("clone %d %d %#x", vtid, child, flags))
}

func (j *procJournal) ProcessExit(vpid int, status int32) {
	j.events = append(j.events, fmt.Sprintf("exit %d %#x", vpid, status))
}

// TestProcessJournal: a ProcessJournal hears of every thread and process
// creation, with its flags, and of every process's end, with its wait
// status, and the run is the same as under a plain Journal: same calls,
// same order, same turns and digest, no stop added.
func TestProcessJournal(t *testing.T) {
	tests := []struct {
		name string
		root []step
		want []string
	}{
		{
			name: "threads and a child process",
			root: []step{
				thread(yield()),
				detcoretest.Clone(abi.SIGCHLD, 0, yield(), detcoretest.Exit(4)),
				yield(), yield(), yield(), detcoretest.Exit(3),
			},
			want: []string{
				"exec 1", fmt.Sprintf("clone 1 2 %#x", detcoretest.ThreadFlags), "clone 1 3 0x11",
				"exit 3 0x400", "exit 1 0x300",
			},
		},
		{
			name: "killed by a signal",
			root: []step{yield(), detcoretest.Signal(abi.SIGSEGV)},
			want: []string{"exec 1", "exit 1 0xb"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain := &scriptJournal{}
			tr1 := newGuest(tc.root...)
			res1 := run(t, detcore.Config{Journal: plain}, tr1)

			pj := &procJournal{}
			tr2 := newGuest(tc.root...)
			res2 := run(t, detcore.Config{Journal: pj}, tr2)
			if !reflect.DeepEqual(pj.events, tc.want) {
				t.Errorf("journal heard\n%q\nwant\n%q", pj.events, tc.want)
			}
			if res1.Stats.Turns != res2.Stats.Turns || res1.Stats.Digest != res2.Stats.Digest ||
				res1.Stats.Stops != res2.Stats.Stops || res1.ExitCode != res2.ExitCode {
				t.Errorf("plain journal: %+v\nprocess journal: %+v", res1, res2)
			}
			if !reflect.DeepEqual(tr1.Calls(), tr2.Calls()) || !reflect.DeepEqual(tr1.Resumes(), tr2.Resumes()) {
				t.Errorf("the guest ran differently under a process journal")
			}
		})
	}
}
