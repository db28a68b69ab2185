#!/usr/bin/env python3
"""bench_report.py: the results page from triage-bench's --json lines.

    scripts/bench_report.py build/bench/latest.json build/bench/RESULTS.md build/bench
    scripts/bench_report.py --facts build/bench/run.json

Writes the Markdown page (tables: ours against the peers, the issues' targets,
the size sweep, every other benchmark) and the data files bench/plot.gp draws
(peers.dat, sweep.dat); the page's facts about the run (machine, time,
commit, compilers) come from run.json beside the JSON lines when it is there
(--facts writes it). Standard library only. Figures are ratios against our
decode in the same run first, absolute ns second: the machines are shared.
"""
import json
import os
import platform
import subprocess
import sys
import time

PEER_ORDER = ["decode", "optics", "simdjson-ondemand", "simdjson-dom", "jsmn", "cjson", "json-c",
              "memchr", "memcpy", "memchr-front", "jq"]


def order(case):
    return PEER_ORDER.index(case) if case in PEER_ORDER else len(PEER_ORDER)


def cmd(*argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine():
    model = ""
    for line in cmd("lscpu").splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
    return "%s, %s CPUs, %s" % (model or platform.processor() or "unknown CPU", os.cpu_count(),
                                platform.platform())


def ns(r):
    return "%.0f (%.0f–%.0f)" % (r["ns_per_msg"], r["ns_min"], r["ns_max"])


def ratio(x):
    """speedup_vs_decode as written on the page: 7.1× (faster) or 1/3.7× (slower);
    a whole-message flood row is thousands of times slower, written as decode's share."""
    if x >= 1:
        return "%.2f×" % x
    return "1/%.1f×" % (1 / x) if x >= 0.001 else "1/%.0f×" % (1 / max(x, 1e-12))


def target_row(w, get, bench, size, name, layout, a, b, limit, strict=False, at_least=False):
    """One row of a targets table: a / b in this run against a limit (at most, or at least)."""
    ra, rb = get(bench, a, layout, size), get(bench, b, layout, size)
    if not ra or not rb:
        w("| %s | %s | (no %s row) | – |" % (name, layout, a if not ra else b))
        return
    x = ra["ns_per_msg"] / rb["ns_per_msg"]
    if at_least:
        ok = x > limit if strict else x >= limit
    else:
        ok = x < limit if strict else x <= limit
    w("| %s | %s | %s %.0f ns / %s %.0f ns = %.2f | %s |" % (
        name, layout, a, ra["ns_per_msg"], b, rb["ns_per_msg"], x, "yes" if ok else "**no**"))


def grpc_scale_section(w, rows):
    """Bench grpc-scale: the proxy's workers, 1 to 256 streams, and the
    latency it adds, with the targets."""
    g = [r for r in rows if r.get("bench") == "grpc-scale"]
    th = [r for r in g if r["kind"] == "throughput"]  # grpc-haproxy's rows go with them
    lats = [r for r in g if r["kind"] == "latency"]
    lat = {r["case"]: r for r in lats if r["streams"] == 8}
    if not g:
        return
    w("## The proxy's workers, streams and latency (bench `grpc-scale`)\n")
    if th:
        w("The same server and load generator as bench `grpc`, %s messages per row, the "
          "responses judged (`optics`) by a proxy process with 1 to %d workers (`--workers`: "
          "event loops on threads, one listening socket each on the same port), or none "
          "(`direct`); S streams over min(S, 8) connections, which the kernel hashes to the "
          "workers (messages per worker in the last column). Worker i is pinned to core i, the "
          "server and the load generator to the last core: with 2 cores, one worker runs apart "
          "from them and a second shares their core. The proxy's CPU time is its process's "
          "(setup and warm-up included) per message it judged; peak RSS is its VmHWM. Median "
          "of %s runs, the rows taking turns.\n"
          % (th[0]["messages"], max(r["workers"] for r in th), th[0].get("reps", 1)))
        w("| streams | conns | case | workers | msgs/s | ×1 worker | proxy CPU µs/msg | "
          "peak RSS MiB | per worker |")
        w("|---:|---:|---|---:|---:|---:|---:|---:|---|")
        one = {r["streams"]: r for r in th if r["workers"] == 1}
        for r in th:
            o = one.get(r["streams"])
            w("| %d | %d | %s | %d | %.0f (%.0f–%.0f) | %s | %s | %s | %s |" % (
                r["streams"], r["connections"], r["case"], r["workers"], r["msgs_per_s"],
                r["msgs_per_s_min"], r["msgs_per_s_max"],
                "%.2f" % (r["msgs_per_s"] / o["msgs_per_s"]) if o and r["workers"] > 0 else "–",
                "%.2f" % r["proxy_cpu_us_per_msg"] if "proxy_cpu_us_per_msg" in r else "–",
                "%.1f" % (r["proxy_hwm_kb"] / 1024) if "proxy_hwm_kb" in r else "–",
                " / ".join(str(x) for x in r.get("per_worker", [])) or "–"))
        w("")
    if lat:
        w("Latency: 1 or 8 calls on one connection, each sending a request message and "
          "waiting for its answer (a message the rules keep, judged on the way) before the "
          "next; the round trip directly and through one worker, nothing pinned; "
          "`optics-busy`: the worker busy polling (`proxy --busy-poll %d`: after events it "
          "polls without sleeping that many µs, so what comes meanwhile is taken without a "
          "wake-up, at the price of that CPU). The cases take turns. A round trip carries two "
          "messages through the proxy, the request and its answer; each message's own time "
          "(one way) is measured too: the request carries when the client sent it, the server "
          "notes when it arrived and when it began the answer, the client when the answer "
          "was whole (one clock, CLOCK_MONOTONIC, on this machine). The added latency is the "
          "difference of the percentiles from `direct`'s.\n"
          % max((r.get("busy_poll_us", 0) for r in lats), default=0))
        w("| streams | case | samples | round trip p50 / p99 µs | added p50 / p99 µs | "
          "one way p99 µs, request / answer | added per message p99 µs, request / answer |")
        w("|---:|---|---:|---:|---:|---:|---:|")

        def pair(r, a, b):
            return "%.1f / %.1f" % (r[a], r[b]) if a in r and b in r else "–"
        for r in lats:
            w("| %d | %s | %d | %s | %s | %s | %s |" % (
                r["streams"], r["case"], r["samples"], pair(r, "p50_us", "p99_us"),
                pair(r, "added_p50_us", "added_p99_us"),
                pair(r, "request_p99_us", "answer_p99_us"),
                pair(r, "request_added_p99_us", "answer_added_p99_us")))
        w("")
    hx = [r for r in rows if r.get("bench") == "grpc-haproxy"]
    if hx:
        w("Behind HAProxy (bench `grpc-haproxy`, deploy/haproxy.cfg): %d calls over %d "
          "connections to HAProxy, which gives them in turn to 0 to 3 proxy processes (one "
          "worker each), all on this machine's cores with the server and the load generator; "
          "one run each. Calls and messages per proxy count the warm-up's too.\n"
          % (hx[0]["streams"], hx[0]["connections"]))
        w("| proxies | msgs/s | calls / messages per proxy |")
        w("|---:|---:|---|")
        for r in hx:
            w("| %d | %.0f | %s |" % (r["proxies"], r["msgs_per_s"], " · ".join(
                "%d / %d" % (p["calls"], p["messages"]) for p in r["per_proxy"]) or
                "HAProxy straight to the server"))
        w("")
    w("Targets (the latency the proxy adds), in this run:\n")
    w("| target | measured | met |")
    w("|---|---|---|")
    by = {(r["workers"], r["streams"]): r for r in th}
    top = max((r["workers"] for r in th), default=0)
    for s in sorted({r["streams"] for r in th}):
        a, b = by.get((1, s)), by.get((top, s))
        if a and b and top > 1 and b["connections"] >= top:  # each worker can get calls
            x = b["msgs_per_s"] / a["msgs_per_s"]
            w("| %d workers at least %.1f× one worker's throughput (%d streams) | %.0f / %.0f "
              "msgs/s = %.2f | %s |" % (top, 0.8 * top, s, b["msgs_per_s"], a["msgs_per_s"], x,
                                       "yes" if x >= 0.8 * top else "**no**"))
    big = [r for r in th if r["streams"] == 256 and r["workers"] == 1]
    if big:
        w("| 256 concurrent streams in one process under a stated memory bound (64 MiB) | peak "
          "RSS %.1f MiB | %s |" % (big[0]["proxy_hwm_kb"] / 1024,
                                   "yes" if big[0]["proxy_hwm_kb"] < 64 * 1024 else "**no**"))
    for c, how in (("optics", ""), ("optics-busy", ", busy polling")):
        if c in lat and "answer_added_p99_us" in lat[c]:
            r = lat[c]
            worst = max(r["request_added_p99_us"], r["answer_added_p99_us"])
            w("| p99 added latency per message at most 50 µs at 8 streams%s (one way, each "
              "direction) | request %.1f µs, answer %.1f µs | %s |" % (
                  how, r["request_added_p99_us"], r["answer_added_p99_us"],
                  "yes" if worst <= 50 else "**no**"))
        if c in lat:
            r = lat[c]
            w("| (the same for a round trip: two messages, a request and its answer%s) | "
              "%.1f µs | %s |" % (how, r["added_p99_us"],
                                  "yes" if r["added_p99_us"] <= 50 else "**no**"))
    w("")


def grpc_section(w, rows):
    """Bench grpc: gRPC over HTTP/2 through the proxy, a table per
    run and the issue's targets at 8 streams."""
    g = [r for r in rows if r.get("bench") == "grpc"]
    if not g:
        return
    w("## gRPC through the proxy (bench `grpc`)\n")
    w("A C nghttp2 server streams %s generated Issues (%s B on average, one per DATA frame) "
      "to a C nghttp2 load generator over one HTTP/2 connection, split over 1, 8 or 64 "
      "concurrent calls: straight (`direct`) or through the proxy's engine "
      "(`runtime/h2proxy.h`, in its own process) judging the responses with the default "
      "rules (`optics`, `decode`) or keeping all (`relay`). Three processes on the machine's "
      "cores; messages/s and MB/s count what the server sent, the median of %s runs, the "
      "cases taking turns (slowest and fastest in brackets). The proxy's copies and "
      "allocations are per message of the timed run (after a warm-up of a tenth), every "
      "malloc of its process counted, the connection's and the calls' own included; then "
      "per message of its steady state (from half the timed run's messages to nine "
      "tenths). CPU µs/msg is the proxy process's user and system time over the timed "
      "run; placed counts the messages that arrived split across DATA frames and were put "
      "back together by the reads.\n"
      % (g[0]["messages"], g[0]["msg_bytes"], g[0].get("reps", 1)))
    w("| streams | case | msgs/s | MB/s | kept | bytes copied/msg | allocs/msg | "
      "steady: bytes copied/msg | steady: allocs/msg | CPU µs/msg | placed |")
    w("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def f(r, key, fmt):
        return fmt % r[key] if key in r else "–"

    for r in g:
        w("| %d | %s | %.0f (%.0f–%.0f) | %.0f | %d | %s | %s | %s | %s | %s | %s |" % (
            r["streams"], r["case"], r["msgs_per_s"], r.get("msgs_per_s_min", r["msgs_per_s"]),
            r.get("msgs_per_s_max", r["msgs_per_s"]), r["mb_per_s"], r["kept"],
            f(r, "bytes_copied_per_msg", "%.2f"), f(r, "mallocs_per_msg", "%.4f"),
            f(r, "steady_bytes_copied_per_msg", "%.2f"), f(r, "steady_mallocs_per_msg", "%.4f"),
            f(r, "proxy_cpu_us_per_msg", "%.2f"), f(r, "messages_placed", "%d")))
    w("")
    at = {r["case"]: r for r in g if r["streams"] == 8}
    w("Targets (the proxy's throughput), at 8 concurrent streams, in this run:\n")
    w("| target | measured | met |")
    w("|---|---|---|")

    def ratio_row(name, a, b, limit):
        if a not in at or b not in at:
            w("| %s | (no %s row) | – |" % (name, a if a not in at else b))
            return
        x = at[a]["msgs_per_s"] / at[b]["msgs_per_s"]
        w("| %s | %s %.0f / %s %.0f msgs/s = %.2f | %s |" % (
            name, a, at[a]["msgs_per_s"], b, at[b]["msgs_per_s"], x,
            "yes" if x >= limit else "**no**"))

    ratio_row("optics at least 0.8× the relay's throughput", "optics", "relay", 0.8)
    ratio_row("optics at least 2× decode's", "optics", "decode", 2.0)
    if "optics" in at and "steady_bytes_copied_per_msg" in at["optics"]:
        o = at["optics"]
        zero = o["steady_bytes_copied_per_msg"] == 0 and o["steady_mallocs_per_msg"] == 0
        w("| 0 bytes copied and 0 allocations per message in the steady state | %.2f B and "
          "%.4f allocations per message (%d engine and %d nghttp2 allocations in all) | %s |"
          % (o["steady_bytes_copied_per_msg"], o["steady_mallocs_per_msg"],
             o["steady_engine_allocs"], o["steady_h2_allocs"], "yes" if zero else "**no**"))
    w("")
    w("A message its sender split across DATA frames (a sender stops where its flow-control "
      "window runs out) is put back together by the proxy's reads and forwarded from the "
      "bytes it arrived in, as every other message is (placed). Still copied, and counted: a "
      "message cut by a DATA frame shorter than 4 KiB, the part one read holds of a message "
      "cut inside it before the proxy saw that its sender cuts messages, and a stalled "
      "call's messages moved out of the read ring's way. The timed run's allocations are its "
      "new connection's and calls': their number does not grow with the messages.\n")
    opt = [r for r in g if r["case"] == "optics" and "mallocs" in r]
    if opt:
        w("In this run, optics: %s mallocs in all, %s messages copied and %s placed, for %s "
          "calls of %s messages.\n" % (", ".join(str(r["mallocs"]) for r in opt),
                                       ", ".join(str(r["messages_copied"]) for r in opt),
                                       ", ".join(str(r.get("messages_placed", 0)) for r in opt),
                                       ", ".join(str(r["streams"]) for r in opt),
                                       opt[0]["messages"]))


def run_facts():
    """What the page says about the run: the machine, when, which commit, the
    compilers. scripts/bench.sh records them (--facts) beside latest.json when it
    runs the bench, so a page published later still tells the run's."""
    def version(compiler, none):
        out = cmd(compiler, "--version")
        return out.splitlines()[0] if out else none

    return {"machine": machine(),
            "run": time.strftime("%Y-%m-%d %H:%M %Z"),
            "commit": cmd("git", "rev-parse", "--short", "HEAD") or "unknown",
            "compilers": "%s; %s" % (version("cc", "cc ?"), version("g++", "no g++"))}


def main():
    if sys.argv[1] == "--facts":
        with open(sys.argv[2], "w") as f:
            json.dump(run_facts(), f)
            f.write("\n")
        return
    src, page, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
    facts_file = os.path.join(os.path.dirname(src), "run.json")
    if os.path.exists(facts_file):
        with open(facts_file) as f:
            facts = json.load(f)
    else:
        facts = run_facts()
    rows = []
    with open(src) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    by = {}
    for r in rows:
        by[(r.get("bench"), r.get("case"), r.get("layout"), r.get("size"))] = r

    def get(bench, case, layout, size):
        return by.get((bench, case, layout, size))

    out = []
    w = out.append
    w("# Benchmark results\n")
    w("Written by `make bench-publish` (scripts/bench.sh) from `%s`, the " % src +
      "`triage-bench --json` lines of one `make bench` run. Rerun with `make bench` (into "
      "`build/bench/`), then `make bench-publish`; for one benchmark, "
      "`build/triage-bench peers` (or `sweep`, `triage`).\n")
    w("- machine: %s" % facts["machine"])
    w("- run: %s, commit %s" % (facts["run"], facts["commit"]))
    w("- compilers: %s" % facts["compilers"])
    impls = sorted({"%s: %s" % (r["case"], r["impl"]) for r in rows
                    if r.get("bench") == "peers" and r.get("impl") and r["case"] in ("optics", "simdjson-ondemand")})
    if impls:
        w("- SIMD kernels picked at run time: " + ", ".join(impls))
    w("")
    w("Method: each case judges every message of a pool of 256 generated messages "
      "(seed 1) with the default policy, after a check that it gives the same verdict "
      "(kind, keep or drop) as our readers on every message (a case that disagrees fails "
      "the run and has no row). Warm-up pass, then 21 timed repetitions of passes over the "
      "pool (each repeated to last about 2 ms, and each after one untimed pass of its own, "
      "so that no case pays for the caches the case before it left), the cases of a pool "
      "taking their repetitions "
      "in turns (in `peers` and `sweep` all of them; in `triage` decode, optics, optics-interp, detail and direct), "
      "so that a slower stretch of the shared machine weighs on each alike; the figure is "
      "the median ns per message "
      "with the fastest and slowest repetitions in brackets. **×decode** is our full "
      "decoder's median over the case's, in the same run (above 1: faster than decode). "
      "MB/s counts the message bytes. Allocations are counted in an untimed pass.\n")

    peers = [r for r in rows if r.get("bench") == "peers"]
    if peers:
        size = peers[0]["size"]
        cases = sorted({r["case"] for r in peers}, key=order)
        late0 = get("peers", "decode", "late", size)
        w("## Ours against the peers (bench `peers`, size %d, %s B a message)\n"
          % (size, late0["msg_bytes"] if late0 else "?"))
        w("| case | late: ×decode | late: ns/msg | first: ×decode | first: ns/msg | MB/s (late) | allocs/msg | what it measures |")
        w("|---|---:|---:|---:|---:|---:|---:|---|")
        for c in cases:
            l, fi = get("peers", c, "late", size), get("peers", c, "first", size)
            any_r = l or fi
            w("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                c, ratio(l["speedup_vs_decode"]) if l else "–", ns(l) if l else "–",
                ratio(fi["speedup_vs_decode"]) if fi else "–", ns(fi) if fi else "–",
                "%.0f" % l["mb_per_s"] if l else "–",
                "%.1f" % any_r["allocs_per_msg"] if "allocs_per_msg" in any_r else "–",
                any_r.get("what", "")))
        missing = [c for c in ["simdjson-ondemand", "simdjson-dom", "jsmn", "cjson", "jq"] if c not in cases]
        if missing:
            w("\nLeft out (this build or machine lacks them, or they failed their check): "
              + ", ".join(missing) + ".")
        w("")

        # The targets, each a ratio in this run.
        def peers_target(*args, **kw):
            target_row(w, get, "peers", size, *args, **kw)

        w("## Targets (the decoder against its peers), ratios in this run\n")
        w("| target | layout | measured | met |")
        w("|---|---|---|---|")

        peers_target("optics no slower than simdjson On-Demand", "late", "optics", "simdjson-ondemand", 1.0)
        peers_target("optics faster than simdjson On-Demand", "first", "optics", "simdjson-ondemand", 1.0, True)
        peers_target("decode at most 2× simdjson DOM", "late", "decode", "simdjson-dom", 2.0)
        peers_target("decode at most 2× simdjson DOM", "first", "decode", "simdjson-dom", 2.0)
        peers_target("optics within 3× of memchr over the bytes before detail", "late", "optics", "memchr-front", 3.0)
        peers_target("optics within 3× of memchr over the bytes before detail", "first", "optics", "memchr-front", 3.0)
        w("")

        # The rules engine's, from the same rows.
        w("## Targets (the rules over every optic), ratios in this run\n")
        w("| target | layout | measured | met |")
        w("|---|---|---|---|")
        peers_target("optics at least 10× faster than decode", "late", "decode", "optics", 10.0,
                     at_least=True)
        peers_target("optics at least 30× faster than decode", "first", "decode", "optics", 30.0,
                     at_least=True)
        peers_target("optics at most 0.5× simdjson On-Demand's time", "late", "optics",
                     "simdjson-ondemand", 0.5)
        peers_target("optics at most 0.35× simdjson On-Demand's time", "first", "optics",
                     "simdjson-ondemand", 0.35)
        w("")

    sweep = [r for r in rows if r.get("bench") == "sweep"]
    if sweep:
        sizes = sorted({r["size"] for r in sweep})
        w("## Size sweep (bench `sweep`)\n")
        w("ns per message (×decode at that size and layout). Message bytes: " + ", ".join(
            "size %d: %s B" % (s, (get("sweep", "decode", "late", s) or {}).get("msg_bytes", "?")) for s in sizes)
          + ". The pool at size 40 (2.9 MB) no longer fits in L2.\n")
        w("| case | layout | " + " | ".join("size %d" % s for s in sizes) + " |")
        w("|---|---|" + "---:|" * len(sizes))
        for c in sorted({r["case"] for r in sweep}, key=order):
            for layout in ("late", "first"):
                cells = []
                for s in sizes:
                    r = get("sweep", c, layout, s)
                    cells.append("%.0f (%s)" % (r["ns_per_msg"], ratio(r["speedup_vs_decode"])) if r else "–")
                w("| %s | %s | %s |" % (c, layout, " | ".join(cells)))
        w("")

    # The verify levels' targets, from bench triage.
    tri = [r for r in rows if r.get("bench") == "triage"]
    if tri:
        tsize = tri[0].get("size")
        w("## Targets (the verify levels), ratios in this run\n")

        def triage_target(*args, **kw):
            target_row(w, get, "triage", tsize, *args, **kw)

        w("| target | layout | measured | met |")
        w("|---|---|---|---|")

        triage_target("optics-json at most 1.5× optics", "late", "optics-json", "optics", 1.5)
        triage_target("optics-schema at most 2× optics", "late", "optics-schema", "optics", 2.0)
        triage_target("optics-json at least 5× faster than decode", "late", "decode", "optics-json", 5.0,
                      at_least=True)
        triage_target("optics-schema at least 5× faster than decode", "late", "decode", "optics-schema",
                      5.0, at_least=True)
        w("")

    grpc_section(w, rows)
    grpc_scale_section(w, rows)

    others = [r for r in rows
              if r.get("bench") not in ("peers", "sweep", "grpc", "grpc-scale", "grpc-haproxy")]
    if others:
        w("## Our other benchmarks\n")
        w("| bench | case | layout | size | ns/msg | ×decode | allocs/msg |")
        w("|---|---|---|---:|---:|---:|---:|")
        for r in others:
            w("| %s | %s | %s | %s | %s | %s | %s |" % (
                r.get("bench"), r.get("case"), r.get("layout", ""), r.get("size", ""),
                ns(r) if "ns_min" in r else r.get("ns_per_msg", ""),
                ratio(r["speedup_vs_decode"]) if "speedup_vs_decode" in r else "",
                r.get("allocs_per_msg", "")))
        w("")

    w("## Plots\n")
    rel = os.path.relpath(os.path.abspath(outdir), os.path.dirname(os.path.abspath(page)))
    w("![ns per message by case and layout](%s/peers.png)\n" % rel)
    w("![throughput against message size](%s/sweep.png)\n" % rel)

    with open(page, "w") as f:
        f.write("\n".join(out))

    # Data for bench/plot.gp.
    if peers:
        with open(os.path.join(outdir, "peers.dat"), "w") as f:
            f.write("case late first\n")
            for c in cases:
                l, fi = get("peers", c, "late", size), get("peers", c, "first", size)
                f.write("%s %s %s\n" % (c, l["ns_per_msg"] if l else "NaN", fi["ns_per_msg"] if fi else "NaN"))
    with open(os.path.join(outdir, "sweep.dat"), "w") as f:
        blocks = 0
        if sweep:
            for c in sorted({r["case"] for r in sweep}, key=order):
                if c == "memchr-front":
                    continue
                for layout in ("late", "first"):
                    # layout matters for optics (and On-Demand); the others read every byte
                    if layout == "first" and c not in ("optics", "simdjson-ondemand"):
                        continue
                    pts = [get("sweep", c, layout, s) for s in sizes]
                    pts = [p for p in pts if p]
                    if not pts:
                        continue
                    if blocks:
                        f.write("\n\n")
                    f.write("%s-%s\n" % (c, layout))
                    for p in pts:
                        f.write("%s %s %s\n" % (p["msg_bytes"], p["mb_per_s"], p["ns_per_msg"]))
                    blocks += 1
    with open(os.path.join(outdir, "sweep.blocks"), "w") as f:
        f.write("%d\n" % blocks)


if __name__ == "__main__":
    main()
