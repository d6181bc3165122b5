package recorder

import "encoding/binary"

// What getsockopt and setsockopt write, for the calls on external sockets
// that replay emulates. getsockopt writes the option and its length;
// netfilter's table calls (iptables, ip6tables, arptables, ebtables: a raw
// socket's SOL_IP or SOL_IPV6 options) also write through pointers held in
// the structure they are given.

// Socket levels and netfilter options (<linux/netfilter_ipv4/ip_tables.h>,
// <linux/netfilter_arp/arp_tables.h>, <linux/netfilter_bridge/ebtables.h>).
const (
	solIP   = 0
	solIPv6 = 41

	iptSoSetReplace     = 64 // IPT_SO_SET_REPLACE, IP6T_SO_SET_REPLACE
	arptSoSetReplace    = 96
	ebtSoSetEntries     = 128
	ebtSoGetEntries     = 129
	ebtSoGetInitEntries = 131

	xtCountersSize = 16 // struct xt_counters, struct ebt_counter
	// Offsets of num_counters and counters in struct ipt_replace (and
	// ip6t_replace), arpt_replace and ebt_replace; of nentries,
	// entries_size and entries in ebt_replace.
	iptNumCounters, iptCounters   = 84, 88
	arptNumCounters, arptCounters = 68, 72
	ebtNentries, ebtEntriesSize   = 36, 40
	ebtNumCounters, ebtCounters   = 96, 104
	ebtEntries                    = 112
	ebtReplaceSize                = 120
)

// getsockopt keeps the option's length and value (up to maxOutput) and,
// for ebtables' entries, the counters and entries written elsewhere.
func (o *outs) getsockopt(a [6]uint64) {
	var l [4]byte
	if a[4] == 0 || o.read(a[4], l[:]) != nil {
		return
	}
	n := int64(binary.LittleEndian.Uint32(l[:]))
	o.add(a[4], 4)
	o.add(a[3], n)
	if a[1] == solIP && (a[2] == ebtSoGetEntries || a[2] == ebtSoGetInitEntries) {
		var h [ebtReplaceSize]byte
		if n < ebtReplaceSize || o.read(a[3], h[:]) != nil {
			return
		}
		le := binary.LittleEndian
		if le.Uint32(h[ebtNumCounters:]) != 0 {
			o.add(le.Uint64(h[ebtCounters:]), xtCountersSize*int64(le.Uint32(h[ebtNentries:])))
		}
		o.add(le.Uint64(h[ebtEntries:]), int64(le.Uint32(h[ebtEntriesSize:])))
	}
}

// setsockopt keeps the counters a netfilter table replacement writes
// back: those of the table it replaced.
func (o *outs) setsockopt(a [6]uint64) {
	var numAt, ptrAt int
	switch {
	case (a[1] == solIP || a[1] == solIPv6) && a[2] == iptSoSetReplace:
		numAt, ptrAt = iptNumCounters, iptCounters
	case a[1] == solIP && a[2] == arptSoSetReplace:
		numAt, ptrAt = arptNumCounters, arptCounters
	case a[1] == solIP && a[2] == ebtSoSetEntries:
		numAt, ptrAt = ebtNumCounters, ebtCounters
	default:
		return
	}
	h := make([]byte, ptrAt+8)
	if a[4] < uint64(len(h)) || o.read(a[3], h) != nil {
		return
	}
	le := binary.LittleEndian
	o.add(le.Uint64(h[ptrAt:]), xtCountersSize*int64(le.Uint32(h[numAt:])))
}
