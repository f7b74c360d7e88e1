// SPDX-License-Identifier: BSD-3-Clause
// VLAN termination for the lab's reference DUT `vlan` (xlatperf/lab/kinds/vlan.py): this kernel
// has no 802.1Q subinterfaces (shared/docs/lab-kernel.md), so the DUT's routed interface stays
// untagged and tc-BPF does what a VLAN subinterface would. Built once per interface with its
// VLAN IDs: -DVLAN_INNER=<C-tag ID 1..4094> -DVLAN_OUTER=<S-tag ID, 0 = none>.
//
//   ingress (tag_pop):  a frame must carry exactly the interface's tags, outermost first
//                       ([VLAN_OUTER,] VLAN_INNER); they are removed and the kernel routes the
//                       untagged frame. Frames with other IDs, fewer or more tags are dropped,
//                       as a router drops frames of VLANs it has no interface on.
//   egress (tag_push):  everything the kernel sends (forwarded packets, ARP, ND) gets the
//                       interface's tags: the C-tag (TPID 0x8100) and, for QinQ, the S-tag
//                       (TPID 0x88a8, IEEE 802.1ad) outside it.
//
// The kernel keeps the outermost tag of a received frame out of the packet data (the skb's
// VLAN metadata, which __sk_buff shows as vlan_present/vlan_tci) and any further tag in the
// data; bpf_skb_vlan_pop removes the metadata tag first and moves the next one there.
// Tags are pushed in the packet data, as a switch port puts them on the wire, not with
// bpf_skb_vlan_push: that one puts the new tag into the metadata, which veth hands to its
// peer as it is, and an XDP program there (the tester's af_xdp port) never sees it.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef VLAN_INNER
#error "build with -DVLAN_INNER=<VLAN ID> (and -DVLAN_OUTER=<VLAN ID> for QinQ)"
#endif
#ifndef VLAN_OUTER
#define VLAN_OUTER 0
#endif

#define TPID_CTAG 0x8100
#define TPID_STAG 0x88a8

static __always_inline int is_tpid(__u16 type) {
  return type == TPID_CTAG || type == TPID_STAG || type == 0x9100;
}

// The outermost tag's VLAN ID, or -1 without a tag.
static __always_inline int outer_vlan(struct __sk_buff *skb) {
  if (skb->vlan_present) return skb->vlan_tci & 0x0fff;
  __u8 hdr[4];  // EtherType (or TPID) at 12, TCI at 14
  if (bpf_skb_load_bytes(skb, 12, hdr, sizeof hdr) < 0) return -1;
  if (!is_tpid((__u16)(hdr[0] << 8 | hdr[1]))) return -1;
  return (hdr[2] << 8 | hdr[3]) & 0x0fff;
}

static __always_inline int pop_expected(struct __sk_buff *skb, int id) {
  return outer_vlan(skb) == id && bpf_skb_vlan_pop(skb) == 0;
}

SEC("tc/ingress")
int tag_pop(struct __sk_buff *skb) {
  if (VLAN_OUTER && !pop_expected(skb, VLAN_OUTER)) return TC_ACT_SHOT;
  if (!pop_expected(skb, VLAN_INNER)) return TC_ACT_SHOT;
  if (outer_vlan(skb) >= 0) return TC_ACT_SHOT;  // a third tag
  return TC_ACT_OK;
}

// Inserts a tag after the MAC addresses, in the data: 4 bytes more at the front, the MAC
// addresses moved there, the tag where they ended.
static __always_inline int push_in_data(struct __sk_buff *skb, __u16 tpid, __u16 id) {
  __u8 macs[12];
  if (bpf_skb_load_bytes(skb, 0, macs, sizeof macs) < 0) return -1;
  if (bpf_skb_change_head(skb, 4, 0) != 0) return -1;
  if (bpf_skb_store_bytes(skb, 0, macs, sizeof macs, 0) < 0) return -1;
  __u8 tag[4] = {tpid >> 8, tpid & 0xff, id >> 8, id & 0xff};
  return bpf_skb_store_bytes(skb, 12, tag, sizeof tag, 0);
}

SEC("tc/egress")
int tag_push(struct __sk_buff *skb) {
  if (skb->vlan_present) return TC_ACT_SHOT;  // the kernel tagged it: not from this router
  if (push_in_data(skb, TPID_CTAG, VLAN_INNER) != 0) return TC_ACT_SHOT;
  if (VLAN_OUTER && push_in_data(skb, TPID_STAG, VLAN_OUTER) != 0) return TC_ACT_SHOT;
  return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
