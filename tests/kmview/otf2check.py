#!/usr/bin/env python3
"""otf2check.py -- checks an OTF2 archive by what otf2-print shows of it,
apart from kmview's code: otf2check.py EVENTS DEFS [ENTERS]

EVENTS is `otf2-print ARCHIVE`, DEFS `otf2-print -G ARCHIVE`.  Checked,
each failure a line "error: ..." and exit status 1:

  * every location's events come in time order, and as many as its
    definition says;
  * regions nest: a LEAVE leaves the innermost region open, and none is
    open at a location's end;
  * every MPI event (send, receive, collective begin and end) lies inside
    an MPI region, a collective's begin and end inside the same one;
  * MPI_COMM_WORLD's location group lists thread 0 of rank i at i;
  * every communicator (COMM) has a COMM_GROUP group whose members are
    indices into MPI_COMM_WORLD's locations, MPI_COMM_WORLD (0) all of
    them in order;
  * a send's receiver and a receive's sender is its rank in the event's
    communicator: translated through that communicator's group into a
    world rank, it is the location otf2-print names beside it;
  * every MPI_SEND has its MPI_RECV on the receiver's location: the k-th
    send from a to b (world ranks) with a tag and communicator is the
    k-th receive b has from a with them, with the same length.

Prints "key value" lines, for a location of rank R thread T: R.T.enters,
.leaves, .sends, .receives, .collectives (ends), and overall
"locations", "events", "sends", "receives", "collectives", "matched",
"unmatched_sent", "unmatched_received"; per communicator C (its
OTF2 number) "comm.C.size", ".matched", ".collectives".  With ENTERS, writes there one
line per rank and region entered: "RANK COUNT TEXT", TEXT the statement
(the region's description) or a routine's name, as the trace's REGION
record names it.
"""
import re
import sys
from collections import defaultdict

ROUTINE_KINDS = ("program", "subroutine", "function", "entry")
EVENT = re.compile(r"^(\S+)\s+(\d+)\s+(\d+)\s*(.*)$")
REGION_REF = re.compile(r"Region: \".*\" <(\d+)>\s*$")
LOCATION = re.compile(r"^LOCATION\s+(\d+)\s+Name: \"(rank|process) (\d+) "
                      r"thread (\d+)\" <\d+>, Type: \w+, # Events: (\d+),")
REGION = re.compile(r"^REGION\s+(\d+)\s+Name: \"(.*?)\" <\d+> \(Aka\. .*?\), "
                    r"Descr\.: \"(.*?)\" <\d+>, Role: (\w+), "
                    r"Paradigm: \"(\w+)\" <\d+>, Flags")
GROUP = re.compile(r"^GROUP\s+\d+\s+Name: .*Type: COMM_LOCATIONS, .*?"
                   r"\d+ Members: (.*)$")
COMM_GROUP = re.compile(r"^GROUP\s+(\d+)\s+Name: .*Type: COMM_GROUP, .*?"
                        r"(\d+) Members: ?(.*)$")
INDEX = re.compile(r"(\d+) \(\"(?:rank|process) \d+ thread \d+\" <\d+>\)")
COMM = re.compile(r"^COMM\s+(\d+)\s+Name: .*, Group: \".*\" <(\d+)>, "
                  r"Parent: (?:UNDEFINED|\".*\" <(\d+)>)")
PEER_LOC = re.compile(r"(?:Receiver|Sender): \d+ \(\"(?:rank|process) (\d+) "
                      r"thread \d+\" <\d+>\)")
COLL_COMM = re.compile(r"Communicator: \".*\" <(\d+)>")
MEMBER = re.compile(r"\"(?:rank|process) (\d+) thread (\d+)\" <(\d+)>")
PEER = re.compile(r"(?:Receiver|Sender): (\d+) .*Communicator: \".*\" <(\d+)>, "
                  r"Tag: (\w+), Length: (\d+)")

errors = []


def error(text):
    if len(errors) < 20:
        errors.append(text)


def read_definitions(path):
    """Locations, regions, MPI_COMM_WORLD's locations, and per
    communicator the world ranks of its members (its group's indices into
    those locations)."""
    locs, regions, world, groups, comms = {}, {}, None, {}, {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LOCATION.match(line)
            if m:
                locs[int(m.group(1))] = (int(m.group(3)), int(m.group(4)),
                                         int(m.group(5)))
                continue
            m = REGION.match(line)
            if m:
                name, descr, paradigm = m.group(2), m.group(3), m.group(5)
                text = name if descr in ROUTINE_KINDS or not descr else descr
                regions[int(m.group(1))] = (text, paradigm)
                continue
            m = GROUP.match(line)
            if m:
                world = [(int(r), int(t), int(ref))
                         for r, t, ref in MEMBER.findall(m.group(1))]
                continue
            m = COMM_GROUP.match(line)
            if m:
                members = [int(i) for i in INDEX.findall(m.group(3))]
                if len(members) != int(m.group(2)):
                    error("group %s: %d members read, %s said"
                          % (m.group(1), len(members), m.group(2)))
                groups[int(m.group(1))] = members
                continue
            m = COMM.match(line)
            if m:
                comms[int(m.group(1))] = (int(m.group(2)), m.group(3))
    members = {}
    for comm, (group, parent) in comms.items():
        if group not in groups:
            error("communicator %d: its group %d is not a COMM_GROUP"
                  % (comm, group))
            continue
        if comm != 0 and parent != "0":
            error("communicator %d: its parent is %s, not MPI_COMM_WORLD"
                  % (comm, parent))
        members[comm] = groups[group]
    if 0 in members and members[0] != list(range(len(members[0]))):
        error("MPI_COMM_WORLD's group is not its locations in order")
    return locs, regions, world, members


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: otf2check.py EVENTS DEFS [ENTERS]")
    locs, regions, world, comm_members = read_definitions(sys.argv[2])
    if not locs:
        error("no locations defined")
    if world is not None:
        for i, (rank, thread, _) in enumerate(world):
            if rank != i or thread != 0:
                error("MPI_COMM_WORLD's member %d is rank %d thread %d"
                      % (i, rank, thread))
    counts = defaultdict(lambda: defaultdict(int))
    enters = defaultdict(int)
    stack = defaultdict(list)
    last = {}
    coll_open = {}
    sends = defaultdict(list)    # (from, to, comm, tag) -> lengths
    recvs = defaultdict(list)
    comm_coll = defaultdict(int)
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        for line in f:
            m = EVENT.match(line)
            if not m or not m.group(2).isdigit() or m.group(1) == "Event":
                continue
            kind, loc, ts, rest = (m.group(1), int(m.group(2)),
                                   int(m.group(3)), m.group(4))
            if loc not in locs:
                error("an event of location %d, not defined" % loc)
                continue
            rank, thread, _ = locs[loc]
            c = counts[loc]
            c["events"] += 1
            if ts < last.get(loc, 0):
                error("location %d: time goes back at %d" % (loc, ts))
            last[loc] = ts
            st = stack[loc]
            if kind in ("ENTER", "LEAVE"):
                r = REGION_REF.search(rest)
                ref = int(r.group(1)) if r else -1
                if kind == "ENTER":
                    st.append(ref)
                    c["enters"] += 1
                    enters[(rank, regions.get(ref, ("?",))[0])] += 1
                else:
                    c["leaves"] += 1
                    if not st or st[-1] != ref:
                        error("location %d: LEAVE of region %d at %d, "
                              "innermost open %s" % (loc, ref, ts,
                                                     st[-1] if st else "none"))
                    else:
                        st.pop()
                    if coll_open.get(loc) is not None and \
                            coll_open[loc] >= len(st):
                        error("location %d: a collective's region left "
                              "before its end" % loc)
                        coll_open[loc] = None
                continue
            if not kind.startswith("MPI_"):
                continue
            if not st or regions.get(st[-1], ("", ""))[1] != "MPI":
                error("location %d: %s at %d outside an MPI region"
                      % (loc, kind, ts))
            if kind == "MPI_COLLECTIVE_BEGIN":
                coll_open[loc] = len(st) - 1
            elif kind == "MPI_COLLECTIVE_END":
                if coll_open.get(loc) != len(st) - 1:
                    error("location %d: a collective's end without its "
                          "begin in the same region" % loc)
                coll_open[loc] = None
                c["collectives"] += 1
                cm = COLL_COMM.search(rest)
                comm_coll[int(cm.group(1)) if cm else -1] += 1
            elif kind in ("MPI_SEND", "MPI_RECV"):
                p = PEER.search(rest)
                if not p:
                    error("location %d: cannot read %s" % (loc, rest))
                    continue
                peer, comm, tag, length = (int(p.group(1)), int(p.group(2)),
                                           p.group(3), int(p.group(4)))
                group = comm_members.get(comm)
                if group is None or peer >= len(group):
                    error("location %d: %s of rank %d in communicator %d, "
                          "which has no such rank" % (loc, kind, peer, comm))
                    continue
                peer = group[peer]   # its world rank
                shown = PEER_LOC.search(rest)
                if not shown or int(shown.group(1)) != peer:
                    error("location %d: %s: rank %d of communicator %d is "
                          "world rank %d, otf2-print names %s"
                          % (loc, kind, int(p.group(1)), comm, peer,
                             shown.group(1) if shown else "none"))
                if kind == "MPI_SEND":
                    c["sends"] += 1
                    sends[(rank, peer, comm, tag)].append(length)
                else:
                    c["receives"] += 1
                    recvs[(peer, rank, comm, tag)].append(length)
    for loc, st in stack.items():
        if st:
            error("location %d: %d region(s) open at its end" % (loc, len(st)))
    for loc, (_, _, declared) in locs.items():
        if counts[loc]["events"] != declared:
            error("location %d: %d events, its definition says %d"
                  % (loc, counts[loc]["events"], declared))
    matched = unmatched_sent = unmatched_received = 0
    comm_matched = defaultdict(int)
    for key in set(sends) | set(recvs):
        s, r = sends.get(key, []), recvs.get(key, [])
        n = min(len(s), len(r))
        for k in range(n):
            if s[k] != r[k]:
                error("message %d of %s: sent %d bytes, received %d"
                      % (k, key, s[k], r[k]))
        matched += n
        comm_matched[key[2]] += n
        unmatched_sent += len(s) - n
        unmatched_received += len(r) - n
    total = defaultdict(int)
    for loc in sorted(locs):
        rank, thread, _ = locs[loc]
        for key in ("enters", "leaves", "sends", "receives", "collectives"):
            print("%d.%d.%s %d" % (rank, thread, key, counts[loc][key]))
            total[key] += counts[loc][key]
        total["events"] += counts[loc]["events"]
    print("locations %d" % len(locs))
    for key in ("events", "sends", "receives", "collectives"):
        print("%s %d" % (key, total[key]))
    print("matched %d\nunmatched_sent %d\nunmatched_received %d"
          % (matched, unmatched_sent, unmatched_received))
    for comm in sorted(comm_members):
        print("comm.%d.size %d\ncomm.%d.matched %d\ncomm.%d.collectives %d"
              % (comm, len(comm_members[comm]), comm, comm_matched[comm],
                 comm, comm_coll[comm]))
    if len(sys.argv) == 4:
        with open(sys.argv[3], "w", encoding="utf-8") as out:
            for (rank, text), n in sorted(enters.items()):
                out.write("%d %d %s\n" % (rank, n, text))
    for e in errors:
        print("error: " + e)
    sys.exit(1 if errors else 0)


main()
