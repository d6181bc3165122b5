/* netfilter: an iptables of its own (in a new network namespace): it
 * reads the filter table's info and entries and replaces the table with
 * them, which writes the old counters back into the program's memory.
 * The replay, which does not touch netfilter, must show the same.
 */
#include "guest.h"

#include <netinet/in.h> /* before the kernel header, which then skips its own */
#include <linux/netfilter_ipv4/ip_tables.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>

static unsigned sum(const void *p, size_t n) {
	unsigned s = 0;
	for (size_t i = 0; i < n; i++)
		s = s * 31 + ((const unsigned char *)p)[i];
	return s;
}

int main(void) {
	CHECK(unshare(CLONE_NEWNET) == 0);
	int s = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	CHECK(s >= 0);
	struct ipt_getinfo info;
	memset(&info, 0, sizeof info);
	strcpy(info.name, "filter");
	socklen_t l = sizeof info;
	if (getsockopt(s, SOL_IP, IPT_SO_GET_INFO, &info, &l) < 0) {
		say("IPT_SO_GET_INFO: %s\n", strerror(errno));
		return 0;
	}
	say("info: hooks %#x, %u entries, %u bytes\n", info.valid_hooks, info.num_entries, info.size);
	socklen_t el = sizeof(struct ipt_get_entries) + info.size;
	struct ipt_get_entries *e = calloc(1, el);
	CHECK(e != NULL);
	strcpy(e->name, "filter");
	e->size = info.size;
	CHECK(getsockopt(s, SOL_IP, IPT_SO_GET_ENTRIES, e, &el) == 0);
	say("entries: %u bytes, sum %#x\n", el, sum(e->entrytable, info.size));
	struct ipt_replace *rp = calloc(1, sizeof *rp + info.size);
	struct xt_counters *cnt = malloc(info.num_entries * sizeof *cnt);
	CHECK(rp != NULL && cnt != NULL);
	memset(cnt, 0xee, info.num_entries * sizeof *cnt);
	strcpy(rp->name, "filter");
	rp->valid_hooks = info.valid_hooks;
	rp->num_entries = info.num_entries;
	rp->size = info.size;
	memcpy(rp->hook_entry, info.hook_entry, sizeof rp->hook_entry);
	memcpy(rp->underflow, info.underflow, sizeof rp->underflow);
	rp->num_counters = info.num_entries;
	rp->counters = cnt;
	memcpy(rp->entries, e->entrytable, info.size);
	int r = setsockopt(s, SOL_IP, IPT_SO_SET_REPLACE, rp, sizeof *rp + info.size);
	say("IPT_SO_SET_REPLACE: %s, counters sum %#x\n", r < 0 ? strerror(errno) : "ok", sum(cnt, info.num_entries * sizeof *cnt));
	return 0;
}
