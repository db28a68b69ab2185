#!/usr/bin/python3
"""peer.py: the grpcio peers of the proxy's interop test (tests/grpc/run.sh).

Run with Debian's /usr/bin/python3 (python3-grpcio). Messages are raw bytes
(no protobuf): the serializers are identity functions, so what the peers send
and receive are the JSON Issues of `triage-demo gen`, byte for byte.

    peer.py server --port-file F --frames F    the test service, on 127.0.0.1
    peer.py client --target HOST:PORT --frames F --verdicts V
                                               every check, one line each
    peer.py quick ... --requests kept|all --responses kept|all [--gzip]
                                               one direction judged, or gzip
    peer.py drain ... --proxy-pid PID          SIGTERM with calls in flight
    peer.py blackhole --port-file F            a server whose connect never completes
    peer.py unavailable --target HOST:PORT     a call through a proxy in front of it
    peer.py garbage --target HOST:PORT ...     clients that are not HTTP/2, then a call
    peer.py spread ... --connections K --calls M
                                               K connections at once, M calls each
    peer.py idle ... --wait S                  a call, S seconds without one, a call

The service (/triage.Test/...):
    Unary    returns the one request message it got (echo)
    Stream   streams the pool (metadata x-count: how many; x-delay-ms: a pause
             between messages; x-pick: always that message of the pool), with
             trailing metadata x-trailer
    Collect  receives a stream, returns the last message received, with the
             count and a SHA-256 of the messages received in trailing metadata
    Chat     echoes each message as it arrives (bidi)
    Forever  streams the pool in a loop until cancelled; counts cancellations
    Stats    returns its counters in trailing metadata
    Cancel   streams the request back 3 times, then cancels the call (RST_STREAM)
    Die      streams 5 messages, then the server process exits at once
"""
import argparse
import hashlib
import os
import struct
import sys
import threading
import time
from concurrent import futures

import grpc

ident = lambda b: b  # noqa: E731  raw bytes both ways


def read_pool(frames_path):
    data = open(frames_path, "rb").read()
    out, i = [], 0
    while i < len(data):
        flag, n = struct.unpack(">BI", data[i:i + 5])
        out.append(data[i + 5:i + 5 + n])
        i += 5 + n
    return out


# ---- the server

class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.cancelled = 0
        self.forever_sent = 0
        self.stream_done = 0.0


# --compression's values, as grpcio names them
COMPRESSION = {None: None, "gzip": grpc.Compression.Gzip, "deflate": grpc.Compression.Deflate}


def serve(args):
    pool = read_pool(args.frames)
    ctr = Counters()

    def unary(req, ctx):
        ctx.send_initial_metadata((("x-initial", "u"),))
        left = ctx.time_remaining()
        ctx.set_trailing_metadata((("x-trailer", "unary"),
                                   ("x-time-left", "%.3f" % (left if left is not None else -1))))
        return req

    def stream(req, ctx):
        md = dict(ctx.invocation_metadata())
        count = int(md.get("x-count", len(pool)))
        delay = int(md.get("x-delay-ms", "0")) / 1000.0
        pick = md.get("x-pick")
        ctx.send_initial_metadata((("x-initial", "s"),))
        ctx.set_trailing_metadata((("x-trailer", "stream"), ("x-sent", str(count))))
        for i in range(count):
            if delay:
                time.sleep(delay)
            yield pool[int(pick) if pick is not None else i % len(pool)]
        with ctr.lock:
            ctr.stream_done = time.time()

    def collect(req_iter, ctx):
        h, n, last = hashlib.sha256(), 0, b""
        for m in req_iter:
            h.update(hashlib.sha256(m).digest())
            n += 1
            last = m
        ctx.set_trailing_metadata((("x-received", str(n)), ("x-sha", h.hexdigest())))
        return last

    def chat(req_iter, ctx):
        for m in req_iter:
            yield m

    def forever(req, ctx):
        def gone():
            with ctr.lock:
                ctr.cancelled += 1
        ctx.add_callback(gone)
        i = 0
        while ctx.is_active():
            yield pool[i % len(pool)]
            i += 1
            with ctr.lock:
                ctr.forever_sent += 1
            time.sleep(0.002)

    def stats(req, ctx):
        with ctr.lock:
            ctx.set_trailing_metadata((("x-cancelled", str(ctr.cancelled)),
                                       ("x-stream-done", "%.6f" % ctr.stream_done)))
        return b""

    def cancel(req, ctx):
        for i in range(3):
            yield req
        ctx.cancel()  # the server resets the stream (RST_STREAM CANCEL)

    def die(req, ctx):
        for i in range(5):
            yield pool[i]
        time.sleep(0.2)
        os._exit(3)

    U, S = grpc.unary_unary_rpc_method_handler, grpc.unary_stream_rpc_method_handler
    C, B = grpc.stream_unary_rpc_method_handler, grpc.stream_stream_rpc_method_handler
    kw = dict(request_deserializer=ident, response_serializer=ident)
    handlers = {
        "Unary": U(unary, **kw), "Stream": S(stream, **kw), "Collect": C(collect, **kw),
        "Chat": B(chat, **kw), "Forever": S(forever, **kw), "Stats": U(stats, **kw),
        "Die": S(die, **kw), "Cancel": S(cancel, **kw),
    }
    # --compression: the server compresses its responses (the clients here
    # accept gzip and deflate)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=32),
                         options=[("grpc.max_receive_message_length", 64 << 20)],
                         compression=COMPRESSION[args.compression])
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("triage.Test", handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, args.port_file)
    server.wait_for_termination(timeout=args.lifetime)


# ---- the client: every check

def read_until_error(it):
    """A streaming call's responses until it ends, and the RpcError that
    ended it (None when it ended OK)."""
    got = []
    try:
        for r in it:
            got.append(r)
    except grpc.RpcError as e:
        return got, e
    return got, None


class Checks:
    def __init__(self):
        self.passed = self.failed = 0
        self.lock = threading.Lock()

    def check(self, what, ok, detail=""):
        with self.lock:
            if ok:
                self.passed += 1
                print("ok   " + what, flush=True)
            else:
                self.failed += 1
                print("FAIL " + what + (": " + detail if detail else ""), flush=True)


def client(args):
    pool = read_pool(args.frames)
    verdicts = [line.split()[1] == "keep" for line in open(args.verdicts)]
    assert len(verdicts) == len(pool), "verdicts and frames differ in count"
    kept = [m for m, k in zip(pool, verdicts) if k]
    kept_ix = [i for i, k in enumerate(verdicts) if k]
    dropped_ix = [i for i, k in enumerate(verdicts) if not k]
    t = Checks()
    T = 20  # seconds: every call has a deadline
    opts = [("grpc.max_send_message_length", 64 << 20),
            ("grpc.max_receive_message_length", 64 << 20)]
    ch = grpc.insecure_channel(args.target, options=opts)
    grpc.channel_ready_future(ch).result(timeout=T)

    def m(kind, name):
        f = {"uu": ch.unary_unary, "us": ch.unary_stream,
             "su": ch.stream_unary, "ss": ch.stream_stream}[kind]
        return f("/triage.Test/" + name, request_serializer=ident, response_deserializer=ident)

    unary, stream, collect = m("uu", "Unary"), m("us", "Stream"), m("su", "Collect")
    chat, forever, stats = m("ss", "Chat"), m("us", "Forever"), m("uu", "Stats")
    a_kept = pool[kept_ix[0]]
    md = (("x-custom", "hello"),)

    # unary: a kept message comes back whole, with metadata and trailers
    resp, call = unary.with_call(a_kept, timeout=T, metadata=md)
    t.check("unary: kept message echoed byte for byte", resp == a_kept)
    t.check("unary: initial metadata", ("x-initial", "u") in call.initial_metadata())
    t.check("unary: trailing metadata", ("x-trailer", "unary") in call.trailing_metadata())
    t.check("unary: status OK", call.code() == grpc.StatusCode.OK)
    left = float(dict(call.trailing_metadata()).get("x-time-left", "-1"))
    t.check("unary: the client's deadline reaches the server (grpc-timeout; %.1f s of %d left)"
            % (left, T), 0 < left <= T + 1, str(left))  # grpc-timeout rounds up
    # a dropped request: the server never sees a message and says so itself
    try:
        unary(pool[dropped_ix[0]], timeout=T)
        t.check("unary: dropped request gets the server's error", False, "call succeeded")
    except grpc.RpcError as e:
        t.check("unary: dropped request gets the server's error (%s)" % e.code().name,
                e.code() != grpc.StatusCode.OK and "proxy" not in (e.details() or ""))

    # server streaming: exactly the kept messages, in order, then the trailers
    it = stream(a_kept, timeout=T, metadata=(("x-count", str(len(pool))),))
    got = list(it)
    t.check("stream: %d of %d messages, exactly the kept ones in order" % (len(got), len(pool)),
            got == kept, "got %d" % len(got))
    t.check("stream: trailing metadata", ("x-trailer", "stream") in it.trailing_metadata())
    t.check("stream: status OK", it.code() == grpc.StatusCode.OK)

    # a long stream, mostly dropped: 24 MB, more than a connection's read
    # ring (16 MiB), so the ring wraps while messages are dropped
    count = 100 * len(pool)
    it = stream(a_kept, timeout=T, metadata=(("x-count", str(count)),))
    got = list(it)
    t.check("long stream: %d of %d messages, exactly the kept ones in order" % (len(got), count),
            got == kept * 100 and it.code() == grpc.StatusCode.OK, "got %d" % len(got))

    # client streaming: the server received exactly the kept messages
    h = hashlib.sha256()
    for k in kept:
        h.update(hashlib.sha256(k).digest())
    resp, call = collect.with_call(iter(pool), timeout=T)
    tm = dict(call.trailing_metadata())
    t.check("collect: server received the %d kept of %d" % (len(kept), len(pool)),
            tm.get("x-received") == str(len(kept)) and tm.get("x-sha") == h.hexdigest(),
            str(tm))
    t.check("collect: response is the last kept message", resp == kept[-1])

    # bidi: kept both ways
    it = chat(iter(pool), timeout=T)
    got = list(it)
    t.check("chat: bidi echo of exactly the kept messages", got == kept, "got %d" % len(got))
    t.check("chat: status OK", it.code() == grpc.StatusCode.OK)

    # unknown method: the server's UNIMPLEMENTED comes back
    nope = ch.unary_unary("/triage.Test/Nope", request_serializer=ident,
                          response_deserializer=ident)
    try:
        nope(a_kept, timeout=T)
        t.check("unknown method: UNIMPLEMENTED", False, "call succeeded")
    except grpc.RpcError as e:
        t.check("unknown method: UNIMPLEMENTED", e.code() == grpc.StatusCode.UNIMPLEMENTED,
                e.code().name)

    # concurrent calls on one connection, and on several
    def one(i, c):
        if i % 2 == 0:
            its = c.stream_stream("/triage.Test/Chat", request_serializer=ident,
                                  response_deserializer=ident)(iter(pool), timeout=T)
        else:
            its = c.unary_stream("/triage.Test/Stream", request_serializer=ident,
                                 response_deserializer=ident)(
                a_kept, timeout=T, metadata=(("x-count", str(len(pool))),))
        return list(its) == kept
    chans = [ch] + [grpc.insecure_channel(args.target, options=opts) for _ in range(3)]
    with futures.ThreadPoolExecutor(max_workers=16) as ex:
        res = list(ex.map(lambda i: one(i, chans[i % 4]), range(16)))
    t.check("16 concurrent calls over 4 connections: each got exactly the kept messages",
            all(res), str(res))

    # a malformed message (over 4 MiB) ends its call only
    big = b"{" + b" " * (5 << 20) + b"}"
    with futures.ThreadPoolExecutor(max_workers=2) as ex:
        fs = ex.submit(lambda: list(stream(a_kept, timeout=T,
                                           metadata=(("x-count", str(len(pool))),
                                                     ("x-delay-ms", "1")))))
        time.sleep(0.1)
        try:
            unary(big, timeout=T)
            t.check("oversized message: RESOURCE_EXHAUSTED from the proxy", False, "succeeded")
        except grpc.RpcError as e:
            t.check("oversized message: RESOURCE_EXHAUSTED from the proxy",
                    e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and
                    "proxy" in (e.details() or ""), "%s %s" % (e.code().name, e.details()))
        t.check("oversized message: the call beside it on the connection completes",
                fs.result(timeout=T) == kept)

    # compressed messages: the proxy judges what the call's grpc-encoding
    # names (gzip and deflate, by default), inflated, and forwards them as
    # they came; a dropped one never reaches the server
    for name in ("gzip", "deflate"):
        cc = grpc.insecure_channel(args.target, options=opts, compression=COMPRESSION[name])
        cu = cc.unary_unary("/triage.Test/Unary", request_serializer=ident,
                            response_deserializer=ident)
        try:
            t.check("%s message: judged, echoed whole" % name, cu(a_kept, timeout=T) == a_kept)
        except grpc.RpcError as e:
            t.check("%s message: judged, echoed whole" % name, False,
                    "%s %s" % (e.code().name, e.details()))
        try:
            cu(pool[dropped_ix[0]], timeout=T)
            t.check("%s message dropped: the server's error" % name, False, "call succeeded")
        except grpc.RpcError as e:
            t.check("%s message dropped: the server's error (%s)" % (name, e.code().name),
                    e.code() != grpc.StatusCode.OK and "proxy" not in (e.details() or ""))
        cc.close()

    # a cancelled call reaches the server as a cancellation
    before = int(dict(stats.with_call(a_kept, timeout=T)[1].trailing_metadata())["x-cancelled"])
    it = forever(a_kept, timeout=T)
    n = 0
    for _ in it:
        n += 1
        if n == 20:
            break
    it.cancel()
    t.check("cancel: client sees CANCELLED", it.code() == grpc.StatusCode.CANCELLED,
            it.code().name)
    deadline = time.time() + 5
    after = before
    while time.time() < deadline and after == before:
        time.sleep(0.05)
        after = int(dict(stats.with_call(a_kept, timeout=T)[1].trailing_metadata())["x-cancelled"])
    t.check("cancel: the server saw the cancellation", after == before + 1,
            "%d -> %d" % (before, after))

    # the server cancels: its reset reaches the client
    got, e = read_until_error(m("us", "Cancel")(a_kept, timeout=T))
    if e is None:
        t.check("server cancels: the client sees CANCELLED", False, "stream ended OK")
    else:
        t.check("server cancels: the client sees CANCELLED after %d messages" % len(got),
                e.code() == grpc.StatusCode.CANCELLED, "%s %s" % (e.code().name, e.details()))

    # a deadline: the client's deadline ends a slow stream with DEADLINE_EXCEEDED
    try:
        list(forever(a_kept, timeout=0.5))
        t.check("deadline: DEADLINE_EXCEEDED", False, "stream ended")
    except grpc.RpcError as e:
        t.check("deadline: DEADLINE_EXCEEDED", e.code() == grpc.StatusCode.DEADLINE_EXCEEDED,
                e.code().name)

    # a client that stops reading for seconds, then resumes: everything
    # arrives, and the server was held back meanwhile (flow control through
    # the proxy): it finished sending only after the client resumed
    # (the largest kept message, sent 40 MB worth, more than the windows and
    # buffers hold: 10000 of the demo's ~4 KB; more of a smaller schema's)
    big = max(kept_ix, key=lambda i: len(pool[i]))
    count = min(max(10000, 40000000 // len(pool[big]) + 1), 200000)
    it = stream(a_kept, timeout=T + 10,
                metadata=(("x-count", str(count)), ("x-pick", str(big))))
    got = []
    for i, r in enumerate(it):
        got.append(r)
        if i == 3:
            time.sleep(3)
            resumed = time.time()
    t.check("slow reader: stopped 3 s, then got all %d (%d B each)" % (count, len(pool[big])),
            got == [pool[big]] * count, "got %d" % len(got))
    done = float(dict(stats.with_call(a_kept, timeout=T)[1].trailing_metadata())["x-stream-done"])
    t.check("slow reader: the server was held back until the client read again",
            done > resumed - 0.05, "server done %.2f s before the client resumed" % (resumed - done))

    # a stalled call does not stall its neighbours: while one call's reader
    # stops, another on the same connection streams more than the read ring
    # holds (the stalled call's messages move out of the ring's way). The
    # stalled reader waits until the neighbour has ended (at most T s), so
    # however slow the machine, the neighbour can only end while it is
    # stalled: were it held up by the stalled call, it would run into its
    # deadline instead.
    release, stopped = threading.Event(), threading.Event()

    def stalled():
        its = stream(a_kept, timeout=2 * T + 10,
                     metadata=(("x-count", "3000"), ("x-pick", str(kept_ix[0]))))
        out = []
        for i, r in enumerate(its):
            out.append(r)
            if i == 0:
                stopped.set()
                release.wait(T)
        return out

    with futures.ThreadPoolExecutor(max_workers=2) as ex:
        fst = ex.submit(stalled)
        stopped.wait(T)  # its first message read, the rest wait in the proxy
        time.sleep(0.2)
        t0 = time.time()
        try:
            big = list(stream(a_kept, timeout=T - 2,
                              metadata=(("x-count", "6000"), ("x-pick", str(kept_ix[1])))))
            why = "got %d" % len(big)
        except grpc.RpcError as e:
            big, why = [], "%s %s" % (e.code().name, e.details())
        took = time.time() - t0
        release.set()
        t.check("neighbour of a stalled call: 6000 kept messages (24 MB) in %.1f s, "
                "while it is stalled" % took, big == [pool[kept_ix[1]]] * 6000, why)
        t.check("the stalled call then gets all its messages",
                fst.result(timeout=2 * T + 10) == [a_kept] * 3000)

    # the server dies mid-stream: the client gets UNAVAILABLE
    got, e = read_until_error(m("us", "Die")(a_kept, timeout=T))
    if e is None:
        t.check("server dies mid-stream: UNAVAILABLE", False, "stream ended OK")
    else:
        t.check("server dies mid-stream: UNAVAILABLE after the kept messages before it",
                e.code() == grpc.StatusCode.UNAVAILABLE and
                got == [p for p, k in zip(pool[:5], verdicts[:5]) if k],
                "%s %s, %d messages" % (e.code().name, e.details(), len(got)))
    # and with the server down, a new call gets UNAVAILABLE from the proxy
    time.sleep(0.3)
    try:
        unary(a_kept, timeout=T)
        t.check("server down: UNAVAILABLE", False, "succeeded")
    except grpc.RpcError as e:
        t.check("server down: UNAVAILABLE", e.code() == grpc.StatusCode.UNAVAILABLE,
                "%s %s" % (e.code().name, e.details()))

    for c in chans:
        c.close()
    print("%d passed, %d failed" % (t.passed, t.failed), flush=True)
    return 0 if t.failed == 0 else 1


def quick(args):
    """Stream and Collect through a proxy judging one direction (or reading
    compressed messages): what each side must see is given by --requests and
    --responses (kept: exactly the kept messages; all: every message); with
    --refused, each call must end with the proxy's INTERNAL instead."""
    pool = read_pool(args.frames)
    verdicts = [line.split()[1] == "keep" for line in open(args.verdicts)]
    kept = [m for m, k in zip(pool, verdicts) if k]
    t = Checks()
    T = 20
    ch = grpc.insecure_channel(args.target, compression=COMPRESSION[args.compression])
    a_kept = kept[0]
    label = args.label
    want_rsp = kept if args.responses == "kept" else pool
    it = ch.unary_stream("/triage.Test/Stream", request_serializer=ident,
                         response_deserializer=ident)(
        a_kept, timeout=T, metadata=(("x-count", str(len(pool))),))
    if args.refused:
        got, err = read_until_error(it)
        t.check("%s: stream: the proxy's INTERNAL (%s)" % (label, err and err.code().name),
                err is not None and err.code() == grpc.StatusCode.INTERNAL
                and "proxy" in (err.details() or ""), err and err.details())
    else:
        got = list(it)
        t.check("%s: stream: responses are %s (%d)" % (label, args.responses, len(got)),
                got == want_rsp, "got %d" % len(got))
    want_req = kept if args.requests == "kept" else pool
    h = hashlib.sha256()
    for k in want_req:
        h.update(hashlib.sha256(k).digest())
    try:
        _, call = ch.stream_unary("/triage.Test/Collect", request_serializer=ident,
                                  response_deserializer=ident).with_call(iter(pool), timeout=T)
        tm = dict(call.trailing_metadata())
        t.check("%s: collect: the server received %s (%s)" % (label, args.requests,
                                                              tm.get("x-received")),
                not args.refused and tm.get("x-received") == str(len(want_req))
                and tm.get("x-sha") == h.hexdigest())
    except grpc.RpcError as e:
        t.check("%s: collect: %s (%s)" % (label, "the proxy's INTERNAL" if args.refused
                                          else "completes", e.code().name),
                args.refused and e.code() == grpc.StatusCode.INTERNAL
                and "proxy" in (e.details() or ""), e.details())
    ch.close()
    print("%d passed, %d failed" % (t.passed, t.failed), flush=True)
    return 0 if t.failed == 0 else 1


def spread(args):
    """--connections channels, each its own connection (a local subchannel
    pool), all open at once, each with --calls Stream and Collect calls
    (responses and requests judged): every call must get exactly the kept
    messages. Through a proxy with workers, the connections spread over
    them; through a balancer, the calls spread over its proxies.
    The calls wait for their channel to be ready: grpcio (1.51) now and then
    gives up on a connection it opened, under load, before sending a byte
    on it ("UNKNOWN: ... No such file or directory"); the channel connects
    again, as a client in production would. That the proxy ended no
    connection itself is checked on its tally (connections_failed)."""
    pool = read_pool(args.frames)
    verdicts = [line.split()[1] == "keep" for line in open(args.verdicts)]
    kept = [m for m, k in zip(pool, verdicts) if k]
    h = hashlib.sha256()
    for k in kept:
        h.update(hashlib.sha256(k).digest())
    t = Checks()
    chans = [grpc.insecure_channel(args.target, options=(("grpc.use_local_subchannel_pool", 1),))
             for _ in range(args.connections)]
    bad_stream, bad_collect, done = [], [], []

    def one(i, c):
        try:
            calls_on(i, c)
        except grpc.RpcError as e:
            bad_stream.append("%d: %s %s" % (i, e.code(), e.details()))

    def calls_on(i, c):
        for _ in range(args.calls):
            got = list(c.unary_stream("/triage.Test/Stream", request_serializer=ident,
                                      response_deserializer=ident)(
                kept[0], timeout=20, metadata=(("x-count", str(len(pool))),),
                wait_for_ready=True))
            if got != kept:
                bad_stream.append("%d: %d messages" % (i, len(got)))
            _, call = c.stream_unary("/triage.Test/Collect", request_serializer=ident,
                                     response_deserializer=ident).with_call(iter(pool), timeout=20,
                                                                      wait_for_ready=True)
            tm = dict(call.trailing_metadata())
            if tm.get("x-received") != str(len(kept)) or tm.get("x-sha") != h.hexdigest():
                bad_collect.append("%d: %s received" % (i, tm.get("x-received")))
            done.append(2)  # list.append is atomic

    ths = [threading.Thread(target=one, args=(i, c)) for i, c in enumerate(chans)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    calls = sum(done)
    t.check("%s: %d connections, %d calls: every stream gets exactly the %d kept messages"
            % (args.label, len(chans), calls, len(kept)), not bad_stream, "; ".join(bad_stream[:3]))
    t.check("%s: every collect, the server received exactly the kept messages" % args.label,
            not bad_collect and calls == 2 * args.calls * len(chans), "; ".join(bad_collect[:3]))
    for c in chans:
        c.close()
    print("%d passed, %d failed" % (t.passed, t.failed), flush=True)
    return 0 if t.failed == 0 else 1


def drain(args):
    """SIGTERM to the proxy while calls are in flight: a call that ends
    within the grace period completes; one that does not is cancelled; a new
    call is refused."""
    import signal
    pool = read_pool(args.frames)
    verdicts = [line.split()[1] == "keep" for line in open(args.verdicts)]
    kept = [m for m, k in zip(pool, verdicts) if k]
    t = Checks()
    T = 20
    ch = grpc.insecure_channel(args.target)
    stream = ch.unary_stream("/triage.Test/Stream", request_serializer=ident,
                             response_deserializer=ident)
    forever = ch.unary_stream("/triage.Test/Forever", request_serializer=ident,
                              response_deserializer=ident)
    list(stream(kept[0], timeout=T, metadata=(("x-count", "1"),)))  # connected
    short = stream(kept[0], timeout=T,
                   metadata=(("x-count", "30"), ("x-delay-ms", "10")))
    long_ = forever(kept[0], timeout=T)
    with futures.ThreadPoolExecutor(max_workers=2) as ex:
        fs = ex.submit(lambda: list(short))

        def drain_long():
            n = 0
            try:
                for _ in long_:
                    n += 1
                return "OK", n
            except grpc.RpcError as e:
                return e.code().name, n
        fl = ex.submit(drain_long)
        time.sleep(0.2)
        t0 = time.time()
        os.kill(args.proxy_pid, signal.SIGTERM)
        try:
            got, err = fs.result(timeout=T), ""
        except grpc.RpcError as e:
            got, err = [], "%s %s" % (e.code().name, e.details())
        t.check("drain: a call in flight completes after SIGTERM (%.1f s)" % (time.time() - t0),
                got == [m for m, k in zip(pool[:30], verdicts[:30]) if k] and
                short.code() == grpc.StatusCode.OK,
                "got %d messages %s" % (len(got), err))
        code, n = fl.result(timeout=T)
        t.check("drain: a call still running after the grace period is cancelled (%s, %.1f s)"
                % (code, time.time() - t0), code in ("CANCELLED", "UNAVAILABLE") and n > 0)
    ch.close()
    print("%d passed, %d failed" % (t.passed, t.failed), flush=True)
    return 0 if t.failed == 0 else 1


def idle(args):
    """A call, then none for --wait seconds (longer than the proxy's
    --idle-timeout: it closes the connection), then another call on the
    same channel: grpcio connects again and the call goes through."""
    pool = read_pool(args.frames)
    verdicts = [line.split()[1] == "keep" for line in open(args.verdicts)]
    kept = [m for m, k in zip(pool, verdicts) if k]
    t = Checks()
    ch = grpc.insecure_channel(args.target)
    unary = ch.unary_unary("/triage.Test/Unary", request_serializer=ident,
                           response_deserializer=ident)
    t.check("idle: a call before", unary(kept[0], timeout=10) == kept[0])
    time.sleep(args.wait)
    try:
        r = unary(kept[0], timeout=10)
        t.check("idle: after %.1f s without a call, the next one on the same channel goes "
                "through" % args.wait, r == kept[0])
    except grpc.RpcError as e:
        t.check("idle: the next call goes through", False, "%s %s" % (e.code().name, e.details()))
    ch.close()
    print("%d passed, %d failed" % (t.passed, t.failed), flush=True)
    return 0 if t.failed == 0 else 1


def blackhole(args):
    """A server that never answers: a listening socket whose accept queue is
    full, so the kernel drops new connections' SYNs and connect() hangs."""
    import socket
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(0)
    port = ls.getsockname()[1]
    fill = []
    for _ in range(4):
        c = socket.socket()
        c.setblocking(False)
        c.connect_ex(("127.0.0.1", port))
        fill.append(c)
    time.sleep(0.2)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, args.port_file)
    time.sleep(args.lifetime)
    return 0


def unavailable(args):
    """One call through a proxy whose server does not answer: UNAVAILABLE
    from the proxy within its --connect-timeout."""
    t = Checks()
    ch = grpc.insecure_channel(args.target)
    t0 = time.time()
    try:
        ch.unary_unary("/triage.Test/Unary", request_serializer=ident,
                       response_deserializer=ident)(b"{}", timeout=20)
        t.check("server that never answers: UNAVAILABLE", False, "succeeded")
    except grpc.RpcError as e:
        took = time.time() - t0
        t.check("server that never answers: UNAVAILABLE after the connect timeout (%.1f s)" % took,
                e.code() == grpc.StatusCode.UNAVAILABLE and "no answer" in (e.details() or "")
                and took < 10, "%s %s" % (e.code().name, e.details()))
    ch.close()
    print("%d passed, %d failed" % (t.passed, t.failed), flush=True)
    return 0 if t.failed == 0 else 1


def garbage(args):
    """Clients that are not HTTP/2, or stop halfway: each costs only its own
    connection; a real call afterwards still goes through."""
    import socket
    host, port = args.target.rsplit(":", 1)
    t = Checks()
    preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    settings = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
    cases = {
        "HTTP/1.1 request": b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        "random bytes": bytes(range(256)) * 4,
        "half a preface, then gone": preface[:10],
        "a preface and a frame cut short": preface + settings + b"\x00\x10\x00\x01\x05",
        "a DATA frame on a stream never opened": preface + settings +
        b"\x00\x00\x05\x00\x01\x00\x00\x00\x01" + b"\x00" * 5,
        "an oversized frame": preface + settings + b"\xff\xff\xff\x00\x00\x00\x00\x00\x01",
    }
    for what, data in cases.items():
        s = socket.create_connection((host, int(port)), timeout=5)
        try:
            s.sendall(data)
            if what.endswith("gone") or what.endswith("short"):
                s.close()
                t.check("%s: the proxy goes on" % what, True)
                continue
            s.shutdown(socket.SHUT_WR)
            got, end = b"", time.time() + 5
            while time.time() < end:
                b = s.recv(65536)
                if not b:
                    break
                got += b
            closed = time.time() < end
            # nghttp2 answers a bad peer with its SETTINGS and a GOAWAY, then we close
            t.check("%s: the proxy closes that connection" % what, closed,
                    "%d bytes, still open after 5 s" % len(got))
        except OSError as e:
            t.check("%s: the proxy closes the connection" % what,
                    isinstance(e, (ConnectionResetError, BrokenPipeError)), repr(e))
        finally:
            s.close()
    ch = grpc.insecure_channel(args.target)
    pool = read_pool(args.frames)
    verdicts = [line.split()[1] == "keep" for line in open(args.verdicts)]
    kept = [m for m, k in zip(pool, verdicts) if k]
    r = ch.unary_unary("/triage.Test/Unary", request_serializer=ident,
                       response_deserializer=ident)(kept[0], timeout=10)
    t.check("after them, a real call goes through", r == kept[0])
    ch.close()
    print("%d passed, %d failed" % (t.passed, t.failed), flush=True)
    return 0 if t.failed == 0 else 1


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--port-file", required=True)
    s.add_argument("--frames", required=True)
    s.add_argument("--lifetime", type=float, default=300)
    s.add_argument("--compression", choices=("gzip", "deflate"))
    c = sub.add_parser("client")
    c.add_argument("--target", required=True)
    c.add_argument("--frames", required=True)
    c.add_argument("--verdicts", required=True)
    q = sub.add_parser("quick")
    q.add_argument("--target", required=True)
    q.add_argument("--frames", required=True)
    q.add_argument("--verdicts", required=True)
    q.add_argument("--label", required=True)
    q.add_argument("--requests", choices=("kept", "all"), required=True)
    q.add_argument("--responses", choices=("kept", "all"), required=True)
    q.add_argument("--compression", choices=("gzip", "deflate"))
    q.add_argument("--refused", action="store_true")
    d = sub.add_parser("drain")
    d.add_argument("--target", required=True)
    d.add_argument("--frames", required=True)
    d.add_argument("--verdicts", required=True)
    d.add_argument("--proxy-pid", type=int, required=True)
    sp = sub.add_parser("spread")
    sp.add_argument("--target", required=True)
    sp.add_argument("--frames", required=True)
    sp.add_argument("--verdicts", required=True)
    sp.add_argument("--label", required=True)
    sp.add_argument("--connections", type=int, default=16)
    sp.add_argument("--calls", type=int, default=1)
    i = sub.add_parser("idle")
    i.add_argument("--target", required=True)
    i.add_argument("--frames", required=True)
    i.add_argument("--verdicts", required=True)
    i.add_argument("--wait", type=float, required=True)
    b = sub.add_parser("blackhole")
    b.add_argument("--port-file", required=True)
    b.add_argument("--lifetime", type=float, default=60)
    u = sub.add_parser("unavailable")
    u.add_argument("--target", required=True)
    gb = sub.add_parser("garbage")
    gb.add_argument("--target", required=True)
    gb.add_argument("--frames", required=True)
    gb.add_argument("--verdicts", required=True)
    a = ap.parse_args()
    if a.cmd == "blackhole":
        return blackhole(a)
    if a.cmd == "server":
        serve(a)
        return 0
    return {"client": client, "quick": quick, "drain": drain, "unavailable": unavailable,
            "garbage": garbage, "spread": spread, "idle": idle}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
