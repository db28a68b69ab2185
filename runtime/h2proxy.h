/* h2proxy.h: a gRPC proxy over HTTP/2 (nghttp2) that judges each message
 * through a callback and forwards only the kept ones, byte for byte.
 *
 * One engine is one epoll loop on one thread: it accepts HTTP/2 cleartext
 * connections (prior knowledge) on a listening socket the caller made, and
 * opens a stream to the server at `upstream` for each call, over one client
 * connection that every call shares (a new one when it fails or the server
 * sends GOAWAY). The engine has no globals: several can run on several
 * threads, each with its own listening socket (hp_listen makes n of them on
 * one address, SO_REUSEPORT) and its own connections to the server; they
 * share nothing but what the judge's context shares, and hp_stats_add sums
 * their counters once they stopped.
 *
 * What travels unchanged: request headers, response headers and trailers
 * (grpc-status, grpc-message, custom metadata; content-length is dropped,
 * since dropping messages changes the body), every method and content-type,
 * RST_STREAM both ways (a client's cancel reaches the server as CANCEL, a
 * server's reset reaches the client with its code); grpc-timeout is a header
 * and travels with the others, so the server and the client each enforce it.
 * What the proxy says itself, as a gRPC status in trailers (a trailers-only
 * response when no response headers went out yet):
 *   UNAVAILABLE (14)        the server cannot be reached (refused, or no
 *                           answer, or no HTTP/2 SETTINGS after the TCP
 *                           connect, within connect_ms), or its connection fails
 *                           or a stream is refused while the call is open;
 *   INTERNAL (13)           a malformed message: compressed (flag 1) without
 *                           a grpc-encoding on the call, a flag byte other
 *                           than 0 or 1, a stream that ends inside a
 *                           message, or the judge refusing it (HP_REFUSE);
 *   RESOURCE_EXHAUSTED (8)  a message longer than HP_MAX_MESSAGE, or a header
 *                           list (either side's) over HP_MAX_HEADER_LIST.
 * Such an error ends that call only (the other side gets RST_STREAM
 * CANCEL); other calls on the same connections go on.
 *
 * Messages. Every DATA byte of a call is split into gRPC messages (both
 * directions, so both get the checks above); a message in a judged
 * direction goes to the judge, the others are kept. A kept message goes out
 * as DATA frames through nghttp2's no-copy data source: its 5-byte prefix
 * and its payload are two iovecs of the sendmsg that sends the frame, and
 * the payload is the bytes it arrived in, in the receiving connection's
 * read ring (ringbuf.h, mirrored, so a read that wraps stays contiguous).
 * A message its sender split across DATA frames is put back together by
 * the reads themselves. Senders split a message where their flow-control
 * window runs out (nghttp2 and gRPC's own stacks fill the window exactly),
 * and some frame a stream without regard to messages. The proxy follows
 * the framing of what it reads and the ends of the windows it granted: a
 * read stops where a sender may have stopped, and the stream of a cut
 * message is then read a frame at a time, each frame header beside the
 * ring, so that the message's parts land back to back in the ring (or in
 * room kept for its rest, when other streams' DATA comes first): judged
 * in place, forwarded without a copy (messages_placed counts them). What
 * is still copied, each byte counted in bytes_copied and each message in
 * messages_copied: a message cut by a frame shorter than 4 KiB (framed
 * reads would cost more than the copy), or cut inside a read before the
 * proxy saw that its sender cuts messages (only the part that read
 * holds: the rest is read straight into the message's own buffer); and a
 * stalled stream's messages moved out of the ring's way (below, counted
 * in messages_moved too). Message records, gathering buffers and calls
 * come from free lists, and nghttp2 is given an allocator with free lists
 * per size class for its small blocks (its queue items, stream objects),
 * which counts what it takes from malloc (h2_allocations): the steady
 * state allocates nothing.
 *
 * Memory and backpressure. Received bytes stay in the connection's ring
 * until the messages they hold were judged and dropped, or written to the
 * other side; only then does the proxy give the flow-control credit back
 * (nghttp2's automatic WINDOW_UPDATE is off). So a client that stops
 * reading stops its server's stream once HP_STREAM_WINDOW bytes wait in the
 * proxy, and a connection never has more than HP_CONN_WINDOW bytes of
 * messages waiting. What is given back is announced, on the connection
 * and on each stream, once it is no less than what the sender has left, not
 * only (as nghttp2 would) once it is half the window: so a stream that
 * stalls, holding its whole stream window (more than half the
 * connection's), leaves its neighbours the rest of the connection's window
 * to go on with (more stalled streams leave them what is not held), and a
 * message of up to 4 MiB arrives whole after smaller ones given back short
 * of half the stream's window. A message's credit goes back only once it
 * is whole, so HP_CONN_WINDOW holds three messages of the largest size
 * arriving at once on one connection; more can fill the window before
 * any is whole: then, since nothing could give credit back, the call
 * whose message holds the most is failed (RESOURCE_EXHAUSTED,
 * window_failed) and its credit given back, and the others go on.
 *
 * Bounds: per stream, HP_STREAM_WINDOW (one largest message and its
 * framing) and its call's record and header blocks; per connection, its
 * ring (HP_RING bytes of address space; resident are the pages written
 * since the connection was last quiet: the ring starts over
 * at its front whenever it holds nothing, and a connection that read
 * nothing for a second or two while holding nothing gives its ring's pages
 * back, ring_bytes_released), plus, when a stalled stream's oldest
 * message holds the ring's tail while other streams go on, up to
 * HP_CONN_WINDOW moved out of the ring into buffers of their own (so one
 * stalled stream never stalls its neighbours; counted as copies); at most
 * HP_MAX_HELD_MSGS messages waiting and HP_MAX_STREAMS calls per client
 * connection. Gathering buffers kept for reuse (at most 16 MiB) are freed
 * when no connection read anything for a second or two.
 *
 * Idle connections: a client connection with no call open for idle_ms
 * (HP_IDLE_MS by default) gets GOAWAY (no error) and is closed once that
 * went out (idle_closed); a gRPC client connects again for its next call.
 * Connections to the server stay open.
 * Out of descriptors (or memory) to accept a connection with: the log says
 * so and the listening socket is left unwatched for 100 ms, instead of the
 * loop spinning on it; queued connections wait in its backlog meanwhile.
 * A connection's ring is made through a descriptor of its own for a moment:
 * the engine makes the next connection's ring before accepting it (and
 * pauses the same way when it cannot), so a connection it accepts is never
 * then dropped for want of its ring.
 * With max_connections client connections open, accepting pauses the same
 * way until one of them closes (the log says so, accept_limited counts it):
 * so the memory the client connections may hold has a bound.
 *
 * Stopping: hp_stop (safe from a signal handler: it writes to an eventfd)
 * or the stop_fd becoming readable starts a drain: the listening socket is
 * closed, clients get GOAWAY, calls in flight may finish for grace_ms, then
 * those left are reset (CANCEL) and hp_run returns. A stop asked again more
 * than a second later ends the grace period at once.
 */
#ifndef TR_H2PROXY_H
#define TR_H2PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* gRPC's default maximum receive message size. */
#define HP_MAX_MESSAGE (4u * 1024u * 1024u)
/* Flow-control windows the proxy grants its peers. */
#define HP_STREAM_WINDOW (HP_MAX_MESSAGE + 64u * 1024u)
#define HP_CONN_WINDOW (16u * 1024u * 1024u)
/* Each connection's read ring (address space; pages are touched as used). */
#define HP_RING (16u * 1024u * 1024u)
/* How long a connection to the server may take to open, by default,
 * before the calls waiting for it get UNAVAILABLE. */
#define HP_CONNECT_MS 10000
/* Messages that arrived on one connection and wait (to be written, or
 * while they arrive): beyond this, reading from it pauses. It bounds the
 * records (about 100 bytes each) when messages are tiny. */
#define HP_MAX_HELD_MSGS 65536u
/* Client connections an engine keeps open at once, by default. */
#define HP_MAX_CONNECTIONS 1024
/* Calls a client may have open at once on one connection. */
#define HP_MAX_STREAMS 1000u
/* The largest header list (request headers, response headers or trailers)
 * a call may have, counted as HTTP/2 does (name, value and 32 bytes a
 * field), and advertised in SETTINGS_MAX_HEADER_LIST_SIZE. HPACK lets a few
 * bytes on the wire stand for a field of 4 KiB: a longer list is not kept,
 * and its call ends with RESOURCE_EXHAUSTED. nghttp2 sends no header block
 * over 64 KiB either, so no longer list could be forwarded. */
#define HP_MAX_HEADER_LIST (64u * 1024u)
#define HP_MAX_HEADER_LIST_TEXT "64 KiB"

/* How long a client connection may stay open with no call, by default. */
#define HP_IDLE_MS (300 * 1000)

/* A message for the judge: its payload (without the 5-byte prefix). */
typedef struct {
    const uint8_t *p;
    size_t n;
    bool compressed;      /* the flag byte was 1 */
    bool request;         /* client to server */
    const char *encoding; /* the call's grpc-encoding in that direction, "" if none */
} hp_message;

enum { HP_DROP = 0, HP_KEEP = 1, HP_REFUSE = -1 };

/* HP_KEEP or HP_DROP; HP_REFUSE ends the call with INTERNAL and the text
 * written to why (NUL-terminated) as grpc-message. Called on the loop's
 * thread; m->p is valid only during the call. */
typedef int (*hp_judge_fn)(void *ctx, const hp_message *m, char *why, size_t whylen);

typedef struct {
    int listen_fd;          /* a listening TCP socket; the engine owns it from hp_new */
    const char *upstream;   /* HOST:PORT of the server */
    bool judge_requests;    /* judge client-to-server messages */
    bool judge_responses;   /* judge server-to-client messages */
    hp_judge_fn judge;      /* NULL: keep everything */
    void *judge_ctx;
    int stop_fd;            /* readable: drain and stop (e.g. a signalfd); -1: none */
    int grace_ms;           /* how long calls may finish after a stop (0: 5000) */
    int connect_ms;         /* how long a connect to the server may take (0: HP_CONNECT_MS) */
    int idle_ms;            /* a client connection with no call open this long is closed
                               (0: HP_IDLE_MS; < 0: never) */
    int max_connections;    /* client connections open at once (0: HP_MAX_CONNECTIONS;
                               < 0: no limit but the descriptors) */
    int busy_poll_us;       /* after events, poll without sleeping this long before the
                               loop sleeps in epoll_wait (0: never; see hp_run) */
    /* Called on the loop's thread with one line (no newline) for each
     * connection the proxy gives up on for a reason other than its peer
     * closing it with no call open, its idleness or the stop: a protocol
     * error, a read or write error, a server that cannot be reached, a
     * connection that could not be set up. At most HP_LOG_PER_S lines a
     * second; a line says how many were left out before it. NULL: none. */
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
} hp_config;

/* The most lines hp_config.log gets in a second. */
#define HP_LOG_PER_S 20

typedef struct {
    uint64_t connections;          /* client connections accepted */
    uint64_t connections_failed;   /* connections (either side) ended by an error (logged) */
    uint64_t upstream_connections; /* connections opened to the server */
    uint64_t calls;                /* calls begun */
    uint64_t calls_failed;         /* ended by the proxy: malformed, refused, unavailable */
    uint64_t window_failed;        /* of them, failed to free a connection's window that
                                      messages not yet whole filled (RESOURCE_EXHAUSTED) */
    uint64_t calls_cancelled;      /* reset by a client or the server, or at the stop */
    uint64_t messages[2];          /* messages seen: [0] requests, [1] responses */
    uint64_t kept[2];              /* of them kept */
    uint64_t bytes[2];             /* their bytes, prefixes included */
    uint64_t kept_bytes[2];
    uint64_t bytes_copied;         /* payload bytes gathered or moved out of a ring */
    uint64_t messages_copied;      /* messages that needed such a copy */
    uint64_t messages_moved;       /* of them, moved out of the way of other streams */
    uint64_t messages_placed;      /* messages split across DATA frames whose parts were
                                      read back to back into the ring: no copy */
    uint64_t idle_closed;          /* client connections closed for being idle */
    uint64_t accept_limited;       /* times accepting paused at max_connections */
    uint64_t ring_bytes_released;  /* ring pages given back by quiet connections */
    uint64_t allocations;          /* the engine's own, setup included */
    uint64_t h2_allocations;       /* nghttp2's, through the counting allocator */
    uint64_t peak_held;            /* most bytes held in all rings at once */
} hp_stats;

typedef struct hp_engine hp_engine;

/* An engine for c (copied; upstream is resolved now). NULL with err set
 * (one line) on failure; then c->listen_fd is closed. */
hp_engine *hp_new(const hp_config *c, char *err, size_t errlen);

/* Runs the loop until a stop has drained. 0, or -1 with err set when the
 * loop itself failed (epoll). With busy_poll_us, the loop polls without
 * sleeping for that long after the last events before it waits. */
int hp_run(hp_engine *e, char *err, size_t errlen);

/* Starts the drain; async-signal-safe. */
void hp_stop(hp_engine *e);

/* What the engine did so far. */
const hp_stats *hp_stats_of(const hp_engine *e);

/* Closes everything and frees the engine. */
void hp_free(hp_engine *e);

/* n listening sockets (n >= 1) on one address, each with SO_REUSEPORT and
 * SO_REUSEADDR, for n engines: the kernel gives each new connection to one
 * of them, by a hash of its addresses and ports, so all the calls of one
 * connection go to one engine and a few connections may land unevenly.
 * Port 0: an ephemeral port, the same for all. Other sockets with
 * SO_REUSEPORT of the same user on that address would share the
 * connections too. Fills fds[0 .. n-1] and *port; 0, or -1 with err set
 * and none left open. */
int hp_listen(const char *hostport, int n, int *fds, uint16_t *port, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* Adds s's counters to sum (peak_held too: a bound on the bytes held by
 * all the engines at once). */
void hp_stats_add(hp_stats *sum, const hp_stats *s);

#endif
