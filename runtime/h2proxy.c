/* h2proxy.c: the gRPC proxy's engine (h2proxy.h): one epoll loop, nghttp2
 * sessions on both sides, messages split in place and forwarded without a
 * copy.
 *
 * Names: a "conn" is one TCP connection with its nghttp2 session (a server
 * session towards a client, a client session towards the server); a "call"
 * is one gRPC call, a stream on a client conn (dc, dsid) paired with a
 * stream on the server conn (uc, usid); a call has two "halves", req
 * (client to server) and rsp, each splitting what arrives into messages and
 * queueing the kept ones for the other side's data source. */
#include "h2proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "clock.h"
#include "error.h"
#include "frames.h"
#include "net.h"
#include "ringbuf.h"

#define HP_OQ 1024          /* iovecs queued for one connection's socket */
#define HP_CTL (64u * 1024) /* bytes of control frames (and DATA frame headers) queued */
#define HP_READS 4          /* reads per readiness, so one connection cannot hog the loop */
#define HP_MSG_SLAB 128     /* message records allocated at a time */
#define HP_PREFIX FR_HEADER_LEN /* a gRPC message's prefix */
#define HP_FRAME_HD 9       /* an HTTP/2 frame header */
#define HP_PREFACE 24       /* the client's connection preface */
#define HP_EDGES 4          /* earlier ends of a sender's window remembered */
#define HP_STRIKES 4        /* full reads an edge may shorten without the sender reaching it */
#define HP_HOLES 8          /* messages of one connection with room kept for their rest */
#define HP_HOLE_READS 256   /* framed reads while room is kept, before it is given up */
#define HP_PLACE_FRAME 4096 /* the shortest frame whose cut message is placed by reads of a
                               frame each (shorter: gathered), window edges aside */
#define HP_CUT_FRAMES 64    /* DATA frames read framed after a sender cut a message */
#define HP_SIDE (16u * 1024) /* what a framed read puts outside the ring: frame headers, and
                                the payloads of frames other than DATA */
#define HP_SWEEP_MS 1000    /* how often quiet connections give their ring's pages back */
#define HP_ACCEPT_PAUSE_MS 100 /* out of descriptors: accepting pauses this long */

/* Free lists, so that the steady state allocates nothing: nghttp2's
 * blocks up to H2_CLASSES x H2_STEP bytes (its frames' queue items, stream
 * objects), at most H2_KEEP per class; gathering buffers of 4 KiB << class,
 * at most BUF_KEEP bytes in all; calls, at most CALLS_KEEP. */
#define H2_STEP 64
#define H2_CLASSES 32
#define H2_KEEP 1024
#define BUF_CLASSES 12
#define BUF_MIN 4096u
#define BUF_KEEP (16u << 20)
#define CALLS_KEEP 256

typedef struct hp_conn hp_conn;
typedef struct hp_call hp_call;
typedef struct hp_msg hp_msg;

/* A call's two sides: the client's connection and the server's. */
enum { SIDE_D, SIDE_U };

/* One gRPC message, from its first prefix byte until it was dropped or
 * written out. Its payload is a view into src's ring (pinning those bytes)
 * or, when it had to be gathered or moved, heap. */
struct hp_msg {
    hp_msg *next;      /* in a half's queue, or in the free list */
    hp_msg *hnext;     /* in src's hold list */
    hp_conn *src;      /* the connection it arrived on */
    int32_t src_sid;   /* and its stream there */
    uint64_t start;    /* stream offset of its first byte in src's ring */
    uint64_t body;     /* and of its payload's first byte (once one arrived) */
    const uint8_t *p;  /* payload */
    uint32_t n, got;   /* payload length, bytes of it received */
    uint32_t sent;     /* of prefix + payload, handed to nghttp2 */
    uint32_t credit;   /* DATA bytes received for it, flow control not yet given back */
    uint32_t refs;     /* iovecs in an output queue pointing at it */
    uint8_t hdr[HP_PREFIX];
    uint8_t *heap;     /* its own payload buffer (buf_get), or NULL */
    uint32_t heap_cls;
    bool sized;        /* its prefix came whole: n is known */
    uint64_t hole_at;  /* room kept in src's ring for its rest: stream offset of its next byte */
    uint32_t hole_left; /* and bytes of it still to fill (0: none kept) */
    bool placed;       /* its payload came in parts that reads put back to back */
    bool pinning;      /* its bytes in src's ring are still needed */
    bool in_hold;      /* in src's hold list */
    bool queued;       /* in a half's queue (or being received) */
};

typedef struct {
    char *buf;
    size_t len, cap;
    struct hdr_field { uint32_t no, nl, vo, vl; uint8_t flags; } *f;
    size_t n, fcap;
    size_t list;  /* the header list's size as HTTP/2 counts it (32 more a field) */
    bool over;    /* a field would have taken list past HP_MAX_HEADER_LIST: not kept */
} hp_hdrs;

/* A sender's flow-control window as the receiver sees it, in DATA
 * payload bytes (padding included) since the stream or connection began:
 * rx received, allow the most it may have sent once every WINDOW_UPDATE
 * written so far reaches it, and at[] the earlier values of allow still
 * ahead of rx. A sender that exhausts its window stops at one of those
 * points, often inside a message, and goes on in a later DATA frame: the
 * reads stop there too (read_limit), so that the message's rest can be
 * placed right after its first part (framed reads). */
typedef struct {
    uint64_t rx, allow;
    uint64_t at[HP_EDGES];
    uint64_t idle_rx;   /* allow stopped limiting reads while rx stays here */
    uint8_t n;
    uint8_t strikes;    /* full reads it shortened in a row without rx moving */
} hp_window;

/* The HTTP/2 framing of what a connection read so far, walked beside
 * nghttp2 (which sees the same bytes): where the next frame header starts
 * and which frame the last bytes read belong to. */
typedef struct {
    uint32_t preface;  /* bytes of the client preface still to come */
    uint32_t len;      /* the current frame's payload length */
    uint32_t left;     /* payload bytes of the current frame still to come */
    uint8_t fh[HP_FRAME_HD];
    uint8_t fh_have;   /* bytes of the next frame header read */
    uint8_t type, flags;
    int32_t sid;       /* the current frame (the last header read) */
} hp_walk;

typedef struct {
    hp_call *call;
    hp_msg *cur;       /* the message being received */
    uint32_t hdr_have; /* its prefix bytes received */
    hp_msg *qh, *qt;   /* kept, waiting to go out */
    bool request;
    bool judged;
    char enc[32];      /* grpc-encoding of the sender, "" for none or identity */
    bool ended;        /* the sender ended its side */
    bool deferred;     /* the data source said DEFERRED: resume on more */
    bool out_done;     /* the data source gave EOF */
    hp_window win;     /* the sender's stream window */
    uint64_t unreturned; /* DATA bytes it received whose credit was not given back */
} hp_half;

struct hp_call {
    hp_engine *e;
    hp_conn *dc, *uc;            /* NULL once that side is closed */
    int32_t dsid, usid;          /* usid 0: not yet submitted */
    hp_call *prev[2], *next[2];  /* in dc's list [SIDE_D] and uc's [SIDE_U];
                                    next[SIDE_D]: in the engine's free list */
    hp_half req, rsp;
    hp_hdrs reqh, rsph, trl;
    bool in_trailers;            /* headers arriving now are the server's trailers */
    bool rsp_submitted;          /* response headers went to the client */
    bool failed;                 /* the proxy ended it */
};

struct hp_conn {
    hp_engine *e;
    hp_conn *prev, *next;        /* every connection */
    hp_conn *dnext;              /* in the dirty list */
    bool dirty;
    int fd;
    bool upstream, connecting, closed, goaway, paused;
    bool failed;                 /* ended by an error: counted and logged once */
    bool greeted;                /* the peer's SETTINGS came (its side of the preface) */
    uint64_t connect_deadline;   /* a server's, until it greets: give up then */
    uint32_t events;             /* registered with epoll */
    nghttp2_session *s;
    rb_ring ring;
    size_t touched;              /* bytes of the ring's first mapping written since its
                                    pages were last given back */
    uint64_t reads;              /* reads so far (the sweep sees which were quiet) */
    uint64_t reads_swept;
    hp_conn *iprev, *inext;      /* in the idle list (a client's, with no call open) */
    bool in_idle;
    bool settings_acked;         /* the peer acknowledged our SETTINGS */
    uint64_t idle_since;
    hp_walk w;
    hp_window win;               /* the peer's connection window */
    /* framed reads (framing_check): the message whose payload so far ends
     * at the ring's write position, cut by its frame's end; and those for
     * whose rest room was kept since (hp_msg.hole_*) */
    hp_msg *at_head;
    hp_msg *holes[HP_HOLES];
    uint8_t nholes;
    uint32_t hole_reads;         /* framed reads since a message began to wait (none did) */
    bool framed;                 /* reads go a frame at a time */
    uint8_t cutting;             /* DATA frames still to read framed (HP_CUT_FRAMES) */
    bool cut;                    /* a message was gathered during this read */
    uint8_t hb[HP_FRAME_HD];     /* where a framed read puts the next frame header */
    hp_msg *hh, *ht;             /* hold list: messages pinning the ring, in order */
    hp_call *calls;
    uint64_t nmsgs;              /* live messages that arrived here (it lives while > 0) */
    uint64_t parsed;             /* stream offset: bytes nghttp2 has read (releasable) */
    uint64_t unreturned;         /* DATA bytes handed to on_data_chunk whose flow-control
                                    credit was not given back yet (give_back) */
    struct iovec oq[HP_OQ];
    hp_msg *oq_msg[HP_OQ];
    size_t oq_head, oq_n;
    uint8_t ctl[HP_CTL];
    size_t ctl_len;
    char peer[NET_NAME_LEN];     /* a client's address and port, for the log */
};

typedef struct slab {
    struct slab *next;
    hp_msg m[HP_MSG_SLAB];
} slab;

struct hp_engine {
    hp_config cfg;
    char upstream[300];
    struct sockaddr_storage up_addr;
    socklen_t up_len;
    int ep, lfd, efd;
    hp_conn *conns, *up, *dirty, *dirty_tail; /* dirty: pumped first in, first out */
    hp_msg *free_msgs;
    slab *slabs;
    hp_call *free_calls;       /* calls kept for reuse, with their header buffers */
    size_t nfree_calls;
    void *h2_free_list[H2_CLASSES + 1]; /* nghttp2's small blocks, by class */
    size_t h2_kept[H2_CLASSES + 1];
    void *buf_free[BUF_CLASSES]; /* gathering buffers, by power of two */
    size_t buf_kept_bytes;
    nghttp2_session_callbacks *cbs;
    nghttp2_option *opt;
    nghttp2_mem mem;
    hp_stats st;
    uint64_t held;
    hp_conn *idle_head, *idle_tail; /* client connections with no call, oldest first */
    uint64_t idle_ns;          /* 0: never close one */
    uint64_t sweep_ns;         /* the next sweep */
    uint64_t reads_swept;      /* e's reads at the last sweep */
    uint64_t reads;
    uint8_t side[HP_SIDE];     /* see HP_SIDE */
    uint64_t ncalls;
    bool draining;
    uint64_t drain_ns, deadline_ns;
    uint64_t busy_ns;          /* cfg.busy_poll_us in ns (0: no busy polling) */
    uint64_t event_ns;         /* when the loop last had events (busy polling) */
    uint64_t log_sec;          /* the second the log's lines are counted in */
    unsigned log_n;            /* lines logged in it */
    uint64_t log_skipped;      /* lines left out since the last one logged */
    uint64_t accept_ns;        /* != 0: accepting paused until then (out of descriptors) */
    rb_ring spare;             /* the next client connection's ring, made before accepting it */
    bool spare_ready;
    unsigned nclients;         /* client connections open */
    bool listen_watched;       /* the listening socket is in the epoll set */
    /* tags for epoll: which descriptor fired */
    char tag_listen, tag_stop, tag_efd;
};

static void *xmalloc(hp_engine *e, size_t n)
{
    e->st.allocations++;
    return malloc(n);
}

static void *xrealloc(hp_engine *e, void *p, size_t n)
{
    e->st.allocations++;
    return realloc(p, n);
}

/* ---- nghttp2's allocator: counted, with a free list per size class.
 * Each block has a 16-byte header (its class, and its size when it has
 * none), so free and realloc know where it belongs. */

typedef struct {
    uint32_t cls; /* 1 .. H2_CLASSES, 0: not kept */
    uint32_t unused;
    size_t size;
} h2_head;

static void *h2_malloc(size_t n, void *ud)
{
    hp_engine *e = ud;
    size_t cls = n <= H2_CLASSES * H2_STEP ? (n + H2_STEP - 1) / H2_STEP : 0;
    if (cls == 0 && n <= H2_STEP)
        cls = 1;
    if (cls > 0 && e->h2_free_list[cls] != NULL) {
        void *p = e->h2_free_list[cls];
        e->h2_free_list[cls] = *(void **)p;
        e->h2_kept[cls]--;
        return p;
    }
    size_t size = cls > 0 ? cls * H2_STEP : n;
    if (size > SIZE_MAX - sizeof(h2_head))
        return NULL;
    h2_head *h = malloc(sizeof *h + size);
    if (h == NULL)
        return NULL;
    e->st.h2_allocations++;
    h->cls = (uint32_t)cls;
    h->size = size;
    return h + 1;
}

static void h2_free(void *p, void *ud)
{
    hp_engine *e = ud;
    if (p == NULL)
        return;
    h2_head *h = (h2_head *)p - 1;
    if (h->cls > 0 && e->h2_kept[h->cls] < H2_KEEP) {
        *(void **)p = e->h2_free_list[h->cls];
        e->h2_free_list[h->cls] = p;
        e->h2_kept[h->cls]++;
        return;
    }
    free(h);
}

static void *h2_calloc(size_t k, size_t n, void *ud)
{
    if (n != 0 && k > SIZE_MAX / n)
        return NULL;
    void *p = h2_malloc(k * n, ud);
    if (p != NULL)
        memset(p, 0, k * n);
    return p;
}

static void *h2_realloc(void *p, size_t n, void *ud)
{
    if (p == NULL)
        return h2_malloc(n, ud);
    h2_head *h = (h2_head *)p - 1;
    if (n <= h->size)
        return p;
    void *q = h2_malloc(n, ud);
    if (q == NULL)
        return NULL;
    memcpy(q, p, h->size);
    h2_free(p, ud);
    return q;
}

static void h2_drop_kept(hp_engine *e)
{
    for (size_t c = 1; c <= H2_CLASSES; c++)
        while (e->h2_free_list[c] != NULL) {
            void *p = e->h2_free_list[c];
            e->h2_free_list[c] = *(void **)p;
            free((h2_head *)p - 1);
        }
}

/* ---- gathering buffers: 4 KiB << class */

static uint8_t *buf_get(hp_engine *e, size_t n, uint32_t *cls_out)
{
    uint32_t cls = 0;
    while (cls + 1 < BUF_CLASSES && ((size_t)BUF_MIN << cls) < n)
        cls++;
    size_t size = (size_t)BUF_MIN << cls;
    if (size < n)
        size = n; /* beyond the classes: exact, not kept */
    *cls_out = size == ((size_t)BUF_MIN << cls) ? cls : UINT32_MAX;
    if (*cls_out != UINT32_MAX && e->buf_free[cls] != NULL) {
        uint8_t *b = e->buf_free[cls];
        e->buf_free[cls] = *(void **)b;
        e->buf_kept_bytes -= size;
        return b;
    }
    return xmalloc(e, size);
}

static void buf_put(hp_engine *e, uint8_t *b, uint32_t cls)
{
    if (b == NULL)
        return;
    size_t size = (size_t)BUF_MIN << (cls < BUF_CLASSES ? cls : 0);
    if (cls >= BUF_CLASSES || e->buf_kept_bytes + size > BUF_KEEP) {
        free(b);
        return;
    }
    *(void **)b = e->buf_free[cls];
    e->buf_free[cls] = b;
    e->buf_kept_bytes += size;
}

static void buf_drop_kept(hp_engine *e)
{
    for (int c = 0; c < BUF_CLASSES; c++)
        while (e->buf_free[c] != NULL) {
            void *b = e->buf_free[c];
            e->buf_free[c] = *(void **)b;
            free(b);
        }
    e->buf_kept_bytes = 0;
}

/* ---- header blocks (one allocation or two per call, grown by doubling) */

static bool hdrs_add(hp_engine *e, hp_hdrs *h, const uint8_t *name, size_t nl, const uint8_t *val,
                     size_t vl, uint8_t flags)
{
    if (nl > UINT32_MAX / 4 || vl > UINT32_MAX / 4)
        return false;
    if (h->over || nl + vl + 32 > HP_MAX_HEADER_LIST - h->list) {
        h->over = true; /* the call ends when the header block does (on_frame_recv) */
        return true;
    }
    h->list += nl + vl + 32;
    if (h->cap - h->len < nl + vl) {
        size_t cap = h->cap ? h->cap : 512;
        while (cap - h->len < nl + vl)
            cap *= 2;
        char *b = xrealloc(e, h->buf, cap);
        if (b == NULL)
            return false;
        h->buf = b;
        h->cap = cap;
    }
    if (h->n == h->fcap) {
        size_t cap = h->fcap ? h->fcap * 2 : 16;
        struct hdr_field *f = xrealloc(e, h->f, cap * sizeof *f);
        if (f == NULL)
            return false;
        h->f = f;
        h->fcap = cap;
    }
    struct hdr_field *f = &h->f[h->n++];
    f->no = (uint32_t)h->len;
    f->nl = (uint32_t)nl;
    memcpy(h->buf + h->len, name, nl);
    h->len += nl;
    f->vo = (uint32_t)h->len;
    f->vl = (uint32_t)vl;
    memcpy(h->buf + h->len, val, vl);
    h->len += vl;
    f->flags = flags;
    return true;
}

static bool hdrs_adds(hp_engine *e, hp_hdrs *h, const char *name, const char *val)
{
    return hdrs_add(e, h, (const uint8_t *)name, strlen(name), (const uint8_t *)val, strlen(val),
                    NGHTTP2_NV_FLAG_NONE);
}

static void hdrs_clear(hp_hdrs *h)
{
    h->len = 0;
    h->n = 0;
    h->list = 0;
    h->over = false;
}

static void hdrs_free(hp_hdrs *h)
{
    free(h->buf);
    free(h->f);
    memset(h, 0, sizeof *h);
}

/* The block as nghttp2_nv (into nv, room for max); content-length left out:
 * dropping messages changes the body's length. */
static size_t hdrs_nv(const hp_hdrs *h, nghttp2_nv *nv, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < h->n && k < max; i++) {
        const struct hdr_field *f = &h->f[i];
        if (f->nl == 14 && memcmp(h->buf + f->no, "content-length", 14) == 0)
            continue;
        nv[k].name = (uint8_t *)h->buf + f->no;
        nv[k].namelen = f->nl;
        nv[k].value = (uint8_t *)h->buf + f->vo;
        nv[k].valuelen = f->vl;
        nv[k].flags = f->flags;
        k++;
    }
    return k;
}

/* nghttp2 copies the array it is given; one on the stack serves most
 * calls, a bigger one is allocated. */
#define NV_STACK 64
typedef struct {
    nghttp2_nv stack[NV_STACK];
    nghttp2_nv *nv;
    size_t n;
} nv_list;

static bool nv_make(hp_engine *e, const hp_hdrs *h, nv_list *l)
{
    l->nv = l->stack;
    if (h->n > NV_STACK) {
        l->nv = xmalloc(e, h->n * sizeof *l->nv);
        if (l->nv == NULL)
            return false;
    }
    l->n = hdrs_nv(h, l->nv, h->n > NV_STACK ? h->n : NV_STACK);
    return true;
}

static void nv_done(nv_list *l)
{
    if (l->nv != l->stack)
        free(l->nv);
}

/* ---- flow-control windows and the framing walk */

static void win_init(hp_window *w, uint64_t allow)
{
    memset(w, 0, sizeof *w);
    w->allow = allow;
    w->idle_rx = UINT64_MAX;
}

static void win_pop(hp_window *w, size_t k)
{
    memmove(w->at, w->at + k, (w->n - k) * sizeof *w->at);
    w->n = (uint8_t)(w->n - k);
}

/* A WINDOW_UPDATE of inc went out: the window's old end stays a point
 * where the sender may have stopped, until it sent past it. */
static void win_grant(hp_window *w, uint32_t inc)
{
    if (w->allow > w->rx) {
        if (w->n == HP_EDGES)
            win_pop(w, 1);
        w->at[w->n++] = w->allow;
    }
    w->allow += inc;
    w->idle_rx = UINT64_MAX;
}

/* How many bytes a read may take without passing the next point where the
 * sender may have stopped (a read of that many holds at most that many
 * DATA bytes); UINT64_MAX when none lies ahead. */
static uint64_t win_room(hp_window *w)
{
    size_t k = 0;
    while (k < w->n && w->at[k] <= w->rx)
        k++;
    if (k > 0)
        win_pop(w, k);
    uint64_t end = w->n > 0 ? w->at[0] : w->allow;
    if (end <= w->rx || (w->n == 0 && w->rx == w->idle_rx))
        return UINT64_MAX;
    return end - w->rx;
}

/* A read that w's next point shortened took all it asked for. A sender
 * that came no nearer (it sends other frames, or nothing on this stream)
 * may never reach that point: after HP_STRIKES such reads in a row it
 * shortens no more reads. */
static void win_strike(hp_window *w, uint64_t rx_before)
{
    if (w->rx != rx_before) {
        w->strikes = 0;
        return;
    }
    if (++w->strikes < HP_STRIKES)
        return;
    w->strikes = 0;
    if (w->n > 0)
        win_pop(w, 1);
    else
        w->idle_rx = w->rx;
}

/* Follows n more bytes of what c read: frame headers, payload lengths, and
 * the DATA bytes the connection's window counts. */
static void walk(hp_conn *c, const uint8_t *p, size_t n)
{
    hp_walk *w = &c->w;
    while (n > 0) {
        size_t t;
        if (w->preface > 0) {
            t = n < w->preface ? n : w->preface;
            w->preface -= (uint32_t)t;
        } else if (w->left > 0) {
            t = n < w->left ? n : w->left;
            if (w->type == NGHTTP2_DATA)
                c->win.rx += t;
            w->left -= (uint32_t)t;
        } else {
            /* a header read whole is parsed where it lies; one cut by
             * the read's end is put together in fh */
            const uint8_t *h = p;
            t = HP_FRAME_HD - w->fh_have;
            if (w->fh_have > 0 || t > n) {
                if (t > n)
                    t = n;
                memcpy(w->fh + w->fh_have, p, t);
                w->fh_have = (uint8_t)(w->fh_have + t);
                h = w->fh_have == HP_FRAME_HD ? w->fh : NULL;
            }
            if (h != NULL) {
                w->fh_have = 0;
                w->len = w->left = (uint32_t)h[0] << 16 | (uint32_t)h[1] << 8 | h[2];
                w->type = h[3];
                w->flags = h[4];
                w->sid = (int32_t)(((uint32_t)h[5] & 0x7f) << 24 | (uint32_t)h[6] << 16 |
                                   (uint32_t)h[7] << 8 | h[8]);
            }
        }
        p += t;
        n -= t;
    }
}

/* ---- connections: epoll interest, the dirty list */

static void conn_events(hp_conn *c)
{
    if (c->closed)
        return;
    uint32_t ev = 0;
    if (!c->paused && !c->connecting)
        ev |= EPOLLIN;
    if (c->oq_n > 0 || c->connecting)
        ev |= EPOLLOUT;
    if (ev == c->events)
        return;
    struct epoll_event x = {.events = ev, .data.ptr = c};
    epoll_ctl(c->e->ep, EPOLL_CTL_MOD, c->fd, &x);
    c->events = ev;
}

static void mark_dirty(hp_conn *c)
{
    if (c == NULL || c->dirty || c->closed)
        return;
    c->dirty = true;
    c->dnext = NULL;
    if (c->e->dirty_tail != NULL)
        c->e->dirty_tail->dnext = c;
    else
        c->e->dirty = c;
    c->e->dirty_tail = c;
}

/* ---- idle client connections, oldest first */

static void idle_leave(hp_conn *c)
{
    hp_engine *e = c->e;
    if (!c->in_idle)
        return;
    if (c->iprev)
        c->iprev->inext = c->inext;
    else
        e->idle_head = c->inext;
    if (c->inext)
        c->inext->iprev = c->iprev;
    else
        e->idle_tail = c->iprev;
    c->iprev = c->inext = NULL;
    c->in_idle = false;
}

/* A client's connection has no call open from now on. */
static void idle_enter(hp_conn *c)
{
    hp_engine *e = c->e;
    if (c->in_idle || c->upstream || c->closed || e->idle_ns == 0)
        return;
    c->idle_since = clk_now_ns();
    c->iprev = e->idle_tail;
    c->inext = NULL;
    if (e->idle_tail)
        e->idle_tail->inext = c;
    else
        e->idle_head = c;
    e->idle_tail = c;
    c->in_idle = true;
}

/* Client connections idle for idle_ns are closed: GOAWAY (no error), and
 * the connection once it went out. The next deadline, or UINT64_MAX. */
static uint64_t idle_expire(hp_engine *e, uint64_t now)
{
    while (e->idle_head != NULL && now - e->idle_head->idle_since >= e->idle_ns) {
        hp_conn *c = e->idle_head;
        idle_leave(c);
        if (c->s != NULL && nghttp2_session_terminate_session(c->s, NGHTTP2_NO_ERROR) == 0) {
            e->st.idle_closed++;
            mark_dirty(c);
        }
    }
    return e->idle_head != NULL ? e->idle_head->idle_since + e->idle_ns : UINT64_MAX;
}

/* ---- flow-control credit given back */

static hp_half *conn_half(hp_conn *c, int32_t sid);

/* Spare credit (received, given back, not announced: nghttp2's own count of
 * what it would announce) goes out as soon as it is no less than what the
 * sender has left, unreturned being the bytes of those received that the
 * proxy still holds; sid 0: the connection's window, else stream sid's.
 * nghttp2 alone announces it once it is half the window. But on a
 * connection, while a stalled stream holds its credit (up to a stream
 * window: more than half the connection's), what the others give back may
 * never reach half; and on a stream, small messages given back short of
 * half leave less than the window for a large message after them, which
 * can only be given back once whole. Either way the sender would wait for
 * a WINDOW_UPDATE that never comes. Both numbers change as bytes arrive
 * and as they are given back, so both call this. */
static void credit_check(hp_conn *c, int32_t sid, uint64_t unreturned)
{
    /* received and not announced (queued WINDOW_UPDATEs count as
     * announced), and what the sender may still send; < 0: no such stream */
    int64_t unannounced =
        sid == 0 ? nghttp2_session_get_effective_recv_data_length(c->s)
                 : nghttp2_session_get_stream_effective_recv_data_length(c->s, sid);
    int64_t left = sid == 0 ? nghttp2_session_get_local_window_size(c->s)
                            : nghttp2_session_get_stream_local_window_size(c->s, sid);
    int64_t spare = unannounced - (int64_t)unreturned;
    if (unannounced >= 0 && left >= 0 && spare > 0 && spare >= left && spare <= INT32_MAX &&
        nghttp2_submit_window_update(c->s, NGHTTP2_FLAG_NONE, sid, (int32_t)spare) == 0)
        mark_dirty(c);
}

/* n DATA bytes of stream sid on c are finished with: their credit goes back
 * to the sender (nghttp2 sends the WINDOW_UPDATEs). */
static void give_back(hp_conn *c, int32_t sid, size_t n)
{
    if (n == 0 || c->s == NULL)
        return;
    c->unreturned -= n < c->unreturned ? n : c->unreturned;
    hp_half *h = conn_half(c, sid);
    if (h != NULL)
        h->unreturned -= n < h->unreturned ? n : h->unreturned;
    nghttp2_session_consume(c->s, sid, n);
    credit_check(c, 0, c->unreturned);
    if (h != NULL)
        credit_check(c, sid, h->unreturned);
    mark_dirty(c);
}

/* ---- messages and the hold list */

static hp_msg *msg_new(hp_engine *e)
{
    if (e->free_msgs == NULL) {
        slab *s = xmalloc(e, sizeof *s);
        if (s == NULL)
            return NULL;
        s->next = e->slabs;
        e->slabs = s;
        for (int i = 0; i < HP_MSG_SLAB; i++) {
            s->m[i].next = e->free_msgs;
            e->free_msgs = &s->m[i];
        }
    }
    hp_msg *m = e->free_msgs;
    e->free_msgs = m->next;
    memset(m, 0, sizeof *m);
    return m;
}

static void conn_events(hp_conn *c);

/* A connection paused because its ring or its message records were full
 * reads again once both have room. */
static void conn_maybe_resume(hp_conn *c)
{
    if (c->paused && !c->closed && c->ring.cap - c->ring.len >= c->ring.cap / 4 &&
        c->nmsgs < HP_MAX_HELD_MSGS / 2) {
        c->paused = false;
        conn_events(c);
    }
}

static void msg_recycle(hp_engine *e, hp_msg *m)
{
    m->src->nmsgs--;
    m->next = e->free_msgs;
    e->free_msgs = m;
    conn_maybe_resume(m->src);
}

/* Gives the ring back up to the first message still pinning it. */
static void conn_advance(hp_conn *c)
{
    hp_engine *e = c->e;
    while (c->hh != NULL && !c->hh->pinning) {
        hp_msg *m = c->hh;
        c->hh = m->hnext;
        if (c->hh == NULL)
            c->ht = NULL;
        m->in_hold = false;
        if (!m->queued && m->refs == 0)
            msg_recycle(e, m);
    }
    uint64_t to = c->hh != NULL && c->hh->start < c->parsed ? c->hh->start : c->parsed;
    if (to > c->ring.consumed) {
        e->held -= to - c->ring.consumed;
        rb_consume(&c->ring, (size_t)(to - c->ring.consumed));
        /* empty: nothing points into it, any position will do; starting
         * over at the front keeps the pages written to those that the
         * largest burst needed */
        if (c->ring.len == 0)
            c->ring.r = 0;
    }
    conn_maybe_resume(c);
}

/* Reads put no more of the message's parts back to back (it came whole,
 * or went). Room kept for its rest and not filled is never written: it is
 * given back with the bytes around it. */
static void msg_unplace(hp_msg *m)
{
    hp_conn *c = m->src;
    if (c->at_head == m)
        c->at_head = NULL;
    m->hole_left = 0;
    for (size_t i = 0; i < c->nholes; i++)
        if (c->holes[i] == m) {
            c->holes[i] = c->holes[--c->nholes];
            break;
        }
}

/* The message is finished with: its flow-control credit goes back to the
 * sender, its bytes are released. */
static void msg_done(hp_msg *m)
{
    msg_unplace(m);
    m->queued = false;
    if (m->refs > 0)
        return; /* the last iovec written calls again */
    hp_conn *src = m->src;
    hp_engine *e = src->e;
    give_back(src, m->src_sid, m->credit);
    m->credit = 0;
    buf_put(e, m->heap, m->heap_cls);
    m->heap = NULL;
    m->pinning = false;
    if (m->in_hold)
        conn_advance(src);
    else
        msg_recycle(e, m);
}

/* The message's payload moves out of the ring into a buffer of its own
 * (counted), and stops pinning the ring. false: out of memory. */
static bool msg_to_heap(hp_msg *m)
{
    hp_engine *e = m->src->e;
    if (m->heap != NULL)
        return true;
    msg_unplace(m);
    /* before its prefix came whole, its length is not known: a buffer of
     * the smallest class, replaced when the length is known (feed) */
    m->heap = buf_get(e, m->sized && m->n > 0 ? m->n : 1, &m->heap_cls);
    if (m->heap == NULL)
        return false;
    if (m->got > 0)
        memcpy(m->heap, m->p, m->got);
    e->st.bytes_copied += m->got;
    e->st.messages_copied++;
    m->p = m->heap;
    m->pinning = false;
    return true;
}

/* A stalled stream's messages at the ring's tail stop holding it: they
 * move out until a quarter of the ring is free again (not one that an
 * unwritten iovec still points at: that one is retried when written). */
static void conn_evacuate(hp_conn *c)
{
    while (c->ring.cap - c->ring.len < c->ring.cap / 4) {
        hp_msg *m = c->hh; /* after conn_advance, the first one pinning */
        if (m == NULL || !m->pinning || m->refs > 0 || !msg_to_heap(m))
            return;
        c->e->st.messages_moved++;
        conn_advance(c);
    }
}

/* Drops the message a half is receiving. */
static void half_drop_cur(hp_half *h)
{
    if (h->cur != NULL) {
        hp_msg *m = h->cur;
        h->cur = NULL;
        h->hdr_have = 0;
        msg_done(m);
    }
}

/* Drops a half's queued messages (and the one being received). */
static void half_drop(hp_half *h)
{
    half_drop_cur(h);
    while (h->qh != NULL) {
        hp_msg *m = h->qh;
        h->qh = m->next;
        msg_done(m);
    }
    h->qt = NULL;
}

/* ---- calls */

/* The connection on a call's side: NULL once that side is closed. */
static hp_conn **call_side(hp_call *k, int side)
{
    return side == SIDE_D ? &k->dc : &k->uc;
}

/* The call joins c's list of calls, c becoming its connection on that side. */
static void call_link(hp_call *k, int side, hp_conn *c)
{
    *call_side(k, side) = c;
    k->prev[side] = NULL;
    k->next[side] = c->calls;
    if (c->calls)
        c->calls->prev[side] = k;
    c->calls = k;
    idle_leave(c);
}

/* The call leaves the list of its connection on that side, if it has one. */
static void call_unlink(hp_call *k, int side)
{
    hp_conn **cp = call_side(k, side), *c = *cp;
    if (c == NULL)
        return;
    if (k->prev[side])
        k->prev[side]->next[side] = k->next[side];
    else
        c->calls = k->next[side];
    if (k->next[side])
        k->next[side]->prev[side] = k->prev[side];
    *cp = NULL;
    k->prev[side] = k->next[side] = NULL;
    if (c->calls == NULL)
        idle_enter(c);
}

static void call_maybe_free(hp_call *k)
{
    if (k->dc != NULL || k->uc != NULL)
        return;
    half_drop(&k->req);
    half_drop(&k->rsp);
    hp_engine *e = k->e;
    e->ncalls--;
    if (e->nfree_calls < CALLS_KEEP) {
        k->next[SIDE_D] = e->free_calls; /* kept with its header buffers */
        e->free_calls = k;
        e->nfree_calls++;
        return;
    }
    hdrs_free(&k->reqh);
    hdrs_free(&k->rsph);
    hdrs_free(&k->trl);
    free(k);
}

static void resume(hp_conn *c, int32_t sid, hp_half *h)
{
    if (c == NULL || c->s == NULL || sid <= 0 || !h->deferred)
        return;
    h->deferred = false;
    nghttp2_session_resume_data(c->s, sid);
    mark_dirty(c);
}

static const nghttp2_data_provider *provider(hp_half *h, nghttp2_data_provider *p);

/* The server's side of a call whose client went away or failed: its
 * stream is reset, or a call not yet submitted leaves the list. */
static void call_cancel_u(hp_call *k)
{
    if (k->uc == NULL)
        return;
    if (k->usid > 0 && k->uc->s != NULL) {
        nghttp2_submit_rst_stream(k->uc->s, NGHTTP2_FLAG_NONE, k->usid, NGHTTP2_CANCEL);
        mark_dirty(k->uc);
    } else if (k->usid == 0) {
        call_unlink(k, SIDE_U);
    }
}

/* The client's stream closed (cancelled: not after the call ended, and
 * counted so unless the proxy failed the call): what goes on to the
 * server stops. */
static void call_close_d(hp_call *k, bool cancelled)
{
    call_unlink(k, SIDE_D);
    half_drop(&k->rsp);
    if (cancelled && !k->failed)
        k->e->st.calls_cancelled++;
    call_cancel_u(k);
    call_maybe_free(k);
}

/* The proxy ends the call with a gRPC status: the server's stream is
 * reset, the client gets the status in trailers (after the messages
 * already queued for it) or as a trailers-only response. */
static void call_fail(hp_call *k, int status, const char *msg)
{
    hp_engine *e = k->e;
    if (k->failed)
        return;
    k->failed = true;
    e->st.calls_failed++;
    call_cancel_u(k);
    half_drop(&k->req);
    half_drop_cur(&k->rsp);
    if (k->dc != NULL && k->dc->s != NULL) {
        char code[16];
        snprintf(code, sizeof code, "%d", status);
        hdrs_clear(&k->trl);
        if (!k->rsp_submitted) {
            hdrs_adds(e, &k->trl, ":status", "200");
            hdrs_adds(e, &k->trl, "content-type", "application/grpc");
        }
        hdrs_adds(e, &k->trl, "grpc-status", code);
        hdrs_adds(e, &k->trl, "grpc-message", msg);
        if (!k->rsp_submitted) {
            nv_list l;
            if (nv_make(e, &k->trl, &l)) {
                nghttp2_submit_response(k->dc->s, k->dsid, l.nv, l.n, NULL);
                nv_done(&l);
            }
            k->rsp_submitted = true;
            k->rsp.out_done = true;
            hdrs_clear(&k->trl);
        } else {
            k->rsp.ended = true;
            resume(k->dc, k->dsid, &k->rsp);
        }
        mark_dirty(k->dc);
    }
    call_maybe_free(k);
}

/* ---- the upstream connection */

static hp_conn *conn_new(hp_engine *e, int fd, bool upstream, rb_ring *ring, char *err,
                         size_t errlen);
static void conn_fail(hp_conn *c, const char *why);
static void listen_update(hp_engine *e);
static void engine_log(hp_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void goaway_seen(hp_conn *c, bool sent, const nghttp2_goaway *g, int refused);

/* Reasons conn_fail is given that are no error (compared by address). */
static const char why_peer_closed[] = "the peer closed the connection";
static const char why_session_ended[] = "the session ended";
static const char why_stopped[] = "the proxy stopped";

/* A socket's error as conn_fail's reason: a peer that reset the connection
 * or was gone when written to closed it. */
static const char *why_errno(int err)
{
    return err == EPIPE || err == ECONNRESET ? why_peer_closed : strerror(err);
}

static void submit_upstream(hp_call *k)
{
    hp_engine *e = k->e;
    hp_conn *c = k->uc;
    nv_list l;
    if (!nv_make(e, &k->reqh, &l)) {
        call_fail(k, 8, "proxy: out of memory");
        return;
    }
    nghttp2_data_provider p;
    int32_t sid = nghttp2_submit_request(c->s, NULL, l.nv, l.n, provider(&k->req, &p), k);
    nv_done(&l);
    if (sid < 0) {
        char m[160];
        snprintf(m, sizeof m, "proxy: cannot open a stream to the server: %s",
                 nghttp2_strerror(sid));
        if (e->up == c)
            e->up = NULL; /* out of stream ids: the next call opens a new connection */
        call_unlink(k, SIDE_U);
        call_fail(k, 14, m);
        return;
    }
    k->usid = sid;
    win_init(&k->rsp.win, HP_STREAM_WINDOW); /* our SETTINGS went before the request */
    mark_dirty(c);
}

static hp_conn *upstream_get(hp_engine *e, char *err, size_t errlen)
{
    if (e->up != NULL && !e->up->closed && !e->up->goaway)
        return e->up;
    e->up = NULL;
    int fd = socket(e->up_addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        tr_say(err, errlen, "cannot connect to %s: %s", e->upstream, strerror(errno));
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int rc = connect(fd, (struct sockaddr *)&e->up_addr, e->up_len);
    if (rc < 0 && errno != EINPROGRESS) {
        tr_say(err, errlen, "cannot connect to %s: %s", e->upstream, strerror(errno));
        close(fd);
        return NULL;
    }
    hp_conn *c = conn_new(e, fd, true, NULL, err, errlen);
    if (c == NULL)
        return NULL;
    c->connecting = rc < 0;
    c->connect_deadline = clk_now_ns() + (uint64_t)e->cfg.connect_ms * 1000000u;
    conn_events(c);
    e->st.upstream_connections++;
    e->up = c;
    return c;
}

static void connected(hp_conn *c)
{
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
        soerr = errno;
    if (soerr != 0) {
        char m[400];
        snprintf(m, sizeof m, "cannot connect to %s: %s", c->e->upstream, strerror(soerr));
        conn_fail(c, m);
        return;
    }
    c->connecting = false;
    conn_events(c);
    for (hp_call *k = c->calls, *next; k != NULL; k = next) {
        next = k->next[SIDE_U];
        if (k->usid == 0)
            submit_upstream(k);
    }
    mark_dirty(c);
}

static void call_start(hp_call *k)
{
    char err[NET_ERR_LEN + 64];
    hp_conn *c = upstream_get(k->e, err, sizeof err);
    if (c == NULL) {
        char m[NET_ERR_LEN + 96];
        snprintf(m, sizeof m, "proxy: %s", err);
        call_fail(k, 14, m);
        return;
    }
    call_link(k, SIDE_U, c);
    k->usid = 0;
    if (!c->connecting)
        submit_upstream(k);
}

/* ---- splitting DATA into messages */

/* A whole message: judged (in a judged direction), then queued for the
 * other side or dropped. false when the call ended. */
static bool message(hp_call *k, hp_half *h, hp_msg *m)
{
    hp_engine *e = k->e;
    int d = h->request ? 0 : 1;
    e->st.messages[d]++;
    e->st.bytes[d] += HP_PREFIX + m->n;
    int v = HP_KEEP;
    char why[256] = "";
    if (h->judged && e->cfg.judge != NULL) {
        /* an empty message has no payload bytes anywhere: never a NULL view */
        static const uint8_t empty[1];
        hp_message hm = {m->n > 0 ? m->p : empty, m->n, m->hdr[0] == 1, h->request, h->enc};
        v = e->cfg.judge(e->cfg.judge_ctx, &hm, why, sizeof why);
    }
    if (v == HP_REFUSE) {
        msg_done(m);
        char t[300];
        snprintf(t, sizeof t, "proxy: %s", why[0] ? why : "message refused");
        call_fail(k, 13, t);
        return false;
    }
    if (v != HP_KEEP) {
        msg_done(m);
        return true;
    }
    e->st.kept[d]++;
    e->st.kept_bytes[d] += HP_PREFIX + m->n;
    m->next = NULL;
    if (h->qt)
        h->qt->next = m;
    else
        h->qh = m;
    h->qt = m;
    if (h->request)
        resume(k->uc, k->usid, h);
    else
        resume(k->dc, k->dsid, h);
    return true;
}

/* The stream offset of a byte of c's ring that nghttp2 handed us (one of
 * the unread bytes: reads land at rb_space's pointer, in either mapping). */
static uint64_t ring_off(const hp_conn *c, const uint8_t *p)
{
    size_t cap = c->ring.cap;
    size_t x = (size_t)(p - c->ring.base) % cap;
    return c->ring.consumed + (x + cap - c->ring.r) % cap;
}

/* Where the bytes from a stream offset (of an unread byte, or the write
 * position) can be read contiguously: the mirror makes any range of up to
 * cap bytes from there one view. */
static const uint8_t *ring_at(const hp_conn *c, uint64_t off)
{
    return c->ring.base + (c->ring.r + (size_t)(off - c->ring.consumed)) % c->ring.cap;
}

/* DATA bytes [p, p + n) of a call's half, as they lie in c's ring. A
 * message's payload is a view of the ring when its bytes lie back to back
 * there: those of one DATA frame, in any number of reads, and those of
 * the frames that framed reads put after them (conn_read). When a frame
 * header or another stream's bytes lie between its parts all the same, it
 * is gathered into a buffer of its own. */
static void feed(hp_call *k, hp_half *h, hp_conn *c, int32_t sid, const uint8_t *p, size_t n)
{
    hp_engine *e = k->e;
    while (n > 0) {
        hp_msg *m = h->cur;
        if (m == NULL) {
            m = msg_new(e);
            if (m == NULL) {
                give_back(c, sid, n);
                call_fail(k, 8, "proxy: out of memory");
                return;
            }
            m->src = c;
            c->nmsgs++;
            m->src_sid = sid;
            m->start = ring_off(c, p);
            m->pinning = true;
            m->in_hold = true;
            m->queued = true;
            if (c->ht)
                c->ht->hnext = m;
            else
                c->hh = m;
            c->ht = m;
            h->cur = m;
            h->hdr_have = 0;
        }
        if (h->hdr_have < HP_PREFIX) {
            size_t t = HP_PREFIX - h->hdr_have;
            if (t > n)
                t = n;
            memcpy(m->hdr + h->hdr_have, p, t);
            h->hdr_have += (uint32_t)t;
            m->credit += (uint32_t)t;
            p += t;
            n -= t;
            if (h->hdr_have < HP_PREFIX)
                return;
            uint32_t len = fr_len(m->hdr);
            const char *bad = NULL;
            int status = 13;
            char t2[160];
            if (m->hdr[0] > 1) {
                snprintf(t2, sizeof t2, "proxy: message flag byte is %u (0 or 1 expected)",
                         m->hdr[0]);
                bad = t2;
            } else if (m->hdr[0] == 1 && h->enc[0] == '\0') {
                bad = "proxy: compressed message without a grpc-encoding";
            } else if (len > HP_MAX_MESSAGE) {
                snprintf(t2, sizeof t2, "proxy: message of %u bytes is over the limit of %u",
                         len, HP_MAX_MESSAGE);
                bad = t2;
                status = 8;
            }
            if (bad != NULL) {
                give_back(c, sid, n);
                call_fail(k, status, bad);
                return;
            }
            m->n = len;
            m->sized = true;
            if (m->heap != NULL && len > BUF_MIN) { /* moved while its prefix came */
                buf_put(e, m->heap, m->heap_cls);
                m->heap = buf_get(e, len, &m->heap_cls);
                m->p = m->heap;
                if (m->heap == NULL) {
                    give_back(c, sid, n);
                    call_fail(k, 8, "proxy: out of memory");
                    return;
                }
            }
        }
        size_t t = m->n - m->got;
        if (t > n)
            t = n;
        if (t > 0) {
            uint64_t off = m->heap == NULL ? ring_off(c, p) : 0;
            if (m->heap == NULL && m->got == 0) {
                m->body = off;
                m->p = ring_at(c, off);
            } else if (m->heap == NULL && m->body + m->got != off) {
                /* split across DATA frames: gather it */
                c->cut = true;
                if (!msg_to_heap(m)) {
                    give_back(c, sid, n);
                    call_fail(k, 8, "proxy: out of memory");
                    return;
                }
            }
            if (m->heap != NULL && p != m->heap + m->got) { /* not read there (framed_read) */
                memcpy(m->heap + m->got, p, t);
                e->st.bytes_copied += t;
            }
            m->got += (uint32_t)t;
            m->credit += (uint32_t)t;
            p += t;
            n -= t;
        }
        if (m->got == m->n) {
            h->cur = NULL;
            h->hdr_have = 0;
            if (m->placed && m->heap == NULL)
                e->st.messages_placed++;
            msg_unplace(m);
            if (!message(k, h, m)) {
                give_back(c, sid, n);
                return;
            }
        }
    }
}

/* The sender ended its side: a message cut short fails the call. */
static void half_end(hp_call *k, hp_half *h)
{
    if (h->ended)
        return;
    h->ended = true;
    if (h->cur != NULL) {
        call_fail(k, 13, h->request ? "proxy: the client's stream ended inside a message"
                                    : "proxy: the server's stream ended inside a message");
        return;
    }
    if (h->request)
        resume(k->uc, k->usid, h);
    else
        resume(k->dc, k->dsid, h);
}

/* ---- the data source: kept messages out as DATA, never copied */

static ssize_t source_read(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
                           uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)buf;
    (void)ud;
    hp_half *h = src->ptr;
    hp_call *k = h->call;
    hp_msg *m = h->qh;
    if (m == NULL) {
        if (!h->ended) {
            h->deferred = true;
            return NGHTTP2_ERR_DEFERRED;
        }
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        h->out_done = true;
        if (!h->request && k->trl.n > 0) {
            nv_list l;
            if (nv_make(k->e, &k->trl, &l)) {
                *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
                nghttp2_submit_trailer(s, sid, l.nv, l.n);
                nv_done(&l);
            }
        }
        return 0;
    }
    size_t left = HP_PREFIX + m->n - m->sent;
    *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    return (ssize_t)(left < length ? left : length);
}

static const nghttp2_data_provider *provider(hp_half *h, nghttp2_data_provider *p)
{
    p->source.ptr = h;
    p->read_callback = source_read;
    return p;
}

static size_t oq_room(const hp_conn *c)
{
    return HP_OQ - c->oq_n;
}

static void oq_push(hp_conn *c, const void *p, size_t n, hp_msg *m)
{
    if (n == 0)
        return;
    if (m == NULL && c->oq_n > 0) {
        size_t last = (c->oq_head + c->oq_n - 1) % HP_OQ;
        struct iovec *v = &c->oq[last];
        if (c->oq_msg[last] == NULL && (const uint8_t *)v->iov_base + v->iov_len == p) {
            v->iov_len += n;
            return;
        }
    }
    size_t i = (c->oq_head + c->oq_n) % HP_OQ;
    c->oq[i].iov_base = (void *)p;
    c->oq[i].iov_len = n;
    c->oq_msg[i] = m;
    if (m)
        m->refs++;
    c->oq_n++;
}

/* Control bytes still to go out must stay where the iovecs point: the
 * buffer starts over only when the queue is empty. */
static uint8_t *ctl_take(hp_conn *c, size_t n)
{
    if (c->oq_n == 0)
        c->ctl_len = 0;
    if (HP_CTL - c->ctl_len < n)
        return NULL;
    uint8_t *p = c->ctl + c->ctl_len;
    c->ctl_len += n;
    return p;
}

static int send_data(nghttp2_session *s, nghttp2_frame *f, const uint8_t *fh, size_t length,
                     nghttp2_data_source *src, void *ud)
{
    (void)s;
    hp_conn *c = ud;
    hp_half *h = src->ptr;
    if (f->data.padlen > 0)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    if (oq_room(c) < 3)
        return NGHTTP2_ERR_WOULDBLOCK;
    uint8_t *hd = ctl_take(c, 9);
    if (hd == NULL)
        return NGHTTP2_ERR_WOULDBLOCK;
    memcpy(hd, fh, 9);
    oq_push(c, hd, 9, NULL);
    hp_msg *m = h->qh;
    size_t left = length;
    if (m == NULL)
        return left == 0 ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
    if (m->sent < HP_PREFIX && left > 0) {
        size_t t = HP_PREFIX - m->sent;
        if (t > left)
            t = left;
        oq_push(c, m->hdr + m->sent, t, m);
        m->sent += (uint32_t)t;
        left -= t;
    }
    if (left > 0) {
        oq_push(c, m->p + (m->sent - HP_PREFIX), left, m);
        m->sent += (uint32_t)left;
    }
    if (m->sent == HP_PREFIX + m->n) {
        h->qh = m->next;
        if (h->qh == NULL)
            h->qt = NULL;
        m->queued = false;
        if (m->refs == 0)
            msg_done(m);
    }
    return 0;
}

static ssize_t send_cb(nghttp2_session *s, const uint8_t *data, size_t length, int flags, void *ud)
{
    (void)s;
    (void)flags;
    hp_conn *c = ud;
    if (oq_room(c) < 1)
        return NGHTTP2_ERR_WOULDBLOCK;
    if (c->oq_n == 0)
        c->ctl_len = 0;
    size_t room = HP_CTL - c->ctl_len;
    if (room == 0)
        return NGHTTP2_ERR_WOULDBLOCK;
    size_t n = length < room ? length : room;
    uint8_t *p = ctl_take(c, n);
    memcpy(p, data, n);
    oq_push(c, p, n, NULL);
    return (ssize_t)n;
}

static ssize_t read_length(nghttp2_session *s, uint8_t type, int32_t sid, int32_t conn_window,
                           int32_t stream_window, uint32_t max_frame, void *ud)
{
    (void)s;
    (void)type;
    (void)sid;
    (void)ud;
    int32_t w = conn_window < stream_window ? conn_window : stream_window;
    if (w < 1)
        w = 1;
    return (uint32_t)w < max_frame ? w : (ssize_t)max_frame;
}

/* Writes the queue; the messages whose last bytes went out are done.
 * 0, or -1 when the socket failed. */
static int flush(hp_conn *c)
{
    while (c->oq_n > 0) {
        size_t cnt = HP_OQ - c->oq_head;
        if (cnt > c->oq_n)
            cnt = c->oq_n;
        if (cnt > IOV_MAX)
            cnt = IOV_MAX;
        struct msghdr mh = {.msg_iov = &c->oq[c->oq_head], .msg_iovlen = cnt};
        ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL); /* writev, without SIGPIPE */
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            return -1;
        }
        size_t left = (size_t)w;
        while (c->oq_n > 0) {
            struct iovec *v = &c->oq[c->oq_head];
            if (left < v->iov_len) {
                v->iov_base = (uint8_t *)v->iov_base + left;
                v->iov_len -= left;
                break;
            }
            left -= v->iov_len;
            hp_msg *m = c->oq_msg[c->oq_head];
            c->oq_msg[c->oq_head] = NULL;
            c->oq_head = (c->oq_head + 1) % HP_OQ;
            c->oq_n--;
            if (m != NULL && --m->refs == 0) {
                if (!m->queued)
                    msg_done(m);
                else if (m->pinning && m->src->paused && m->src->hh == m)
                    conn_evacuate(m->src); /* it stalled the ring; now it can move */
            }
        }
    }
    c->ctl_len = 0;
    return 0;
}

static void pump(hp_conn *c)
{
    if (c->closed || c->connecting || c->s == NULL)
        return;
    for (int i = 0; i < 16; i++) {
        int rv = nghttp2_session_send(c->s);
        if (rv != 0) {
            conn_fail(c, nghttp2_strerror(rv));
            return;
        }
        if (flush(c) != 0) {
            conn_fail(c, why_errno(errno));
            return;
        }
        if (c->oq_n > 0 || !nghttp2_session_want_write(c->s))
            break;
    }
    conn_events(c);
    if (c->oq_n == 0 && !nghttp2_session_want_read(c->s) && !nghttp2_session_want_write(c->s))
        conn_fail(c, why_session_ended);
}

/* ---- nghttp2 callbacks: what arrives */

static hp_call *stream_call(hp_conn *c, int32_t sid)
{
    return nghttp2_session_get_stream_user_data(c->s, sid);
}

/* The half of call k that receives what c carries: the response from the
 * server's connection, the request from a client's. */
static hp_half *half_from(const hp_conn *c, hp_call *k)
{
    return c->upstream ? &k->rsp : &k->req;
}

/* The half of a call that receives what c's stream sid carries. */
static hp_half *conn_half(hp_conn *c, int32_t sid)
{
    hp_call *k = c->s != NULL && sid > 0 ? stream_call(c, sid) : NULL;
    return k == NULL ? NULL : half_from(c, k);
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    hp_conn *c = ud;
    hp_engine *e = c->e;
    if (f->hd.type != NGHTTP2_HEADERS)
        return 0;
    if (!c->upstream) {
        if (f->headers.cat != NGHTTP2_HCAT_REQUEST)
            return 0;
        hp_call *k = e->free_calls;
        if (k != NULL) {
            e->free_calls = k->next[SIDE_D];
            e->nfree_calls--;
            hp_hdrs keep[3] = {k->reqh, k->rsph, k->trl};
            memset(k, 0, sizeof *k);
            k->reqh = keep[0];
            k->rsph = keep[1];
            k->trl = keep[2];
            hdrs_clear(&k->reqh);
            hdrs_clear(&k->rsph);
            hdrs_clear(&k->trl);
        } else {
            k = xmalloc(e, sizeof *k);
            if (k == NULL)
                return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
            memset(k, 0, sizeof *k);
        }
        k->e = e;
        k->dsid = f->hd.stream_id;
        k->req.call = k;
        k->rsp.call = k;
        k->req.request = true;
        k->req.judged = e->cfg.judge_requests;
        k->rsp.judged = e->cfg.judge_responses;
        /* a client that opened the stream before our SETTINGS reached it
         * had HTTP/2's default window for it at first */
        win_init(&k->req.win, c->settings_acked ? HP_STREAM_WINDOW : NGHTTP2_INITIAL_WINDOW_SIZE);
        if (!c->settings_acked)
            win_grant(&k->req.win, HP_STREAM_WINDOW - NGHTTP2_INITIAL_WINDOW_SIZE);
        call_link(k, SIDE_D, c);
        e->ncalls++;
        e->st.calls++;
        nghttp2_session_set_stream_user_data(s, f->hd.stream_id, k);
        return 0;
    }
    hp_call *k = stream_call(c, f->hd.stream_id);
    if (k != NULL && f->headers.cat == NGHTTP2_HCAT_HEADERS) {
        k->in_trailers = true;
        if (!k->failed)
            hdrs_clear(&k->trl);
    }
    return 0;
}

static void note_encoding(hp_half *h, const uint8_t *v, size_t vl)
{
    if ((vl == 8 && memcmp(v, "identity", 8) == 0) || vl >= sizeof h->enc) {
        h->enc[0] = vl >= sizeof h->enc ? '?' : '\0';
        h->enc[vl >= sizeof h->enc ? 1 : 0] = '\0';
        return;
    }
    memcpy(h->enc, v, vl);
    h->enc[vl] = '\0';
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nl,
                     const uint8_t *val, size_t vl, uint8_t flags, void *ud)
{
    (void)s;
    hp_conn *c = ud;
    if (f->hd.type != NGHTTP2_HEADERS)
        return 0;
    hp_call *k = stream_call(c, f->hd.stream_id);
    if (k == NULL)
        return 0;
    hp_hdrs *h;
    if (!c->upstream) {
        if (f->headers.cat != NGHTTP2_HCAT_REQUEST)
            return 0; /* a client's trailers: gRPC has none */
        h = &k->reqh;
        if (nl == 13 && memcmp(name, "grpc-encoding", 13) == 0)
            note_encoding(&k->req, val, vl);
    } else if (k->in_trailers) {
        if (k->failed)
            return 0;
        h = &k->trl;
    } else {
        h = &k->rsph;
        if (nl == 13 && memcmp(name, "grpc-encoding", 13) == 0)
            note_encoding(&k->rsp, val, vl);
    }
    if (!hdrs_add(c->e, h, name, nl, val, vl, flags & NGHTTP2_NV_FLAG_NO_INDEX))
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)s;
    hp_conn *c = ud;
    if (f->hd.type == NGHTTP2_GOAWAY) {
        if (f->goaway.error_code != NGHTTP2_NO_ERROR)
            goaway_seen(c, false, &f->goaway, 0);
        if (c->upstream) {
            c->goaway = true;
            if (c->e->up == c)
                c->e->up = NULL;
        }
        return 0;
    }
    if (f->hd.type == NGHTTP2_SETTINGS && (f->hd.flags & NGHTTP2_FLAG_ACK))
        c->settings_acked = true;
    else if (f->hd.type == NGHTTP2_SETTINGS)
        c->greeted = true;
    if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)
        return 0;
    hp_call *k = stream_call(c, f->hd.stream_id);
    if (k == NULL)
        return 0;
    if (f->hd.type == NGHTTP2_DATA) /* its padding counts in the window too */
        half_from(c, k)->win.rx += f->data.padlen;
    bool end = (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (!c->upstream) {
        if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST) {
            if (c->e->draining) {
                /* raced the GOAWAY: nghttp2 refuses later ones itself */
                nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, k->dsid,
                                          NGHTTP2_REFUSED_STREAM);
                mark_dirty(c);
                k->failed = true;
                return 0;
            }
            if (k->reqh.over)
                call_fail(k, 8, "proxy: the request's header list is over "
                                HP_MAX_HEADER_LIST_TEXT);
            else
                call_start(k);
        }
        if (end && !k->failed)
            half_end(k, &k->req);
        return 0;
    }
    if (k->failed || k->dc == NULL)
        return 0;
    if (f->hd.type == NGHTTP2_HEADERS && (k->rsph.over || k->trl.over)) {
        call_fail(k, 8, "proxy: the server's header list is over " HP_MAX_HEADER_LIST_TEXT);
        return 0;
    }
    if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_RESPONSE) {
        nv_list l;
        if (!nv_make(c->e, &k->rsph, &l)) {
            call_fail(k, 8, "proxy: out of memory");
            return 0;
        }
        nghttp2_data_provider p;
        k->rsp_submitted = true;
        if (end) {
            k->rsp.ended = true;
            k->rsp.out_done = true;
            nghttp2_submit_response(k->dc->s, k->dsid, l.nv, l.n, NULL);
        } else {
            nghttp2_submit_response(k->dc->s, k->dsid, l.nv, l.n, provider(&k->rsp, &p));
        }
        nv_done(&l);
        mark_dirty(k->dc);
        return 0;
    }
    if (end)
        half_end(k, &k->rsp);
    return 0;
}

static int on_data_chunk(nghttp2_session *s, uint8_t flags, int32_t sid, const uint8_t *data,
                         size_t len, void *ud)
{
    (void)flags;
    hp_conn *c = ud;
    hp_call *k = nghttp2_session_get_stream_user_data(s, sid);
    hp_half *h = k != NULL ? half_from(c, k) : NULL;
    /* every DATA byte lies in the ring, or where a framed read put the
     * rest of a gathered message: the walk and nghttp2 agree on the
     * framing (a view elsewhere would be a view of the wrong bytes) */
    uintptr_t lo = (uintptr_t)c->ring.base, at = (uintptr_t)data;
    if ((at < lo || at - lo > 2 * c->ring.cap - len) &&
        (h == NULL || h->cur == NULL || h->cur->heap == NULL ||
         data != h->cur->heap + h->cur->got || len > h->cur->n - h->cur->got))
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    c->unreturned += len;
    if (h != NULL) {
        h->win.rx += len;
        h->unreturned += len;
        credit_check(c, sid, h->unreturned);
    }
    if (k == NULL || k->failed) {
        give_back(c, sid, len);
        return 0;
    }
    bool open = c->upstream ? k->dc != NULL : k->uc != NULL;
    if (!open) {
        give_back(c, sid, len);
        return 0;
    }
    feed(k, h, c, sid, data, len);
    return 0;
}

/* A WINDOW_UPDATE that went out moves the end of the sender's window. */
static int on_frame_send(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)s;
    hp_conn *c = ud;
    if (f->hd.type == NGHTTP2_GOAWAY && f->goaway.error_code != NGHTTP2_NO_ERROR)
        goaway_seen(c, true, &f->goaway, 0);
    if (f->hd.type != NGHTTP2_WINDOW_UPDATE || f->window_update.window_size_increment <= 0)
        return 0;
    uint32_t inc = (uint32_t)f->window_update.window_size_increment;
    if (f->hd.stream_id == 0) {
        win_grant(&c->win, inc);
    } else {
        hp_half *h = conn_half(c, f->hd.stream_id);
        if (h != NULL)
            win_grant(&h->win, inc);
    }
    return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t sid, uint32_t code, void *ud)
{
    hp_conn *c = ud;
    hp_call *k = nghttp2_session_get_stream_user_data(s, sid);
    if (k == NULL)
        return 0;
    hp_engine *e = c->e;
    if (!c->upstream) {
        if (k->dc != c)
            return 0;
        call_close_d(k, code != NGHTTP2_NO_ERROR);
        return 0;
    }
    if (k->uc != c)
        return 0;
    call_unlink(k, SIDE_U);
    half_drop(&k->req);
    if (!k->failed && k->dc != NULL && !k->rsp.ended) {
        if (code == NGHTTP2_REFUSED_STREAM) {
            call_fail(k, 14, "proxy: the server refused the stream");
            return 0;
        }
        if (code != NGHTTP2_NO_ERROR) {
            e->st.calls_cancelled++;
            nghttp2_submit_rst_stream(k->dc->s, NGHTTP2_FLAG_NONE, k->dsid, code);
            mark_dirty(k->dc);
        } else {
            call_fail(k, 13, "proxy: the server closed the stream without a status");
            return 0;
        }
    }
    call_maybe_free(k);
    return 0;
}

/* ---- connections: life and death */

static bool session_new(hp_conn *c, char *err, size_t errlen)
{
    hp_engine *e = c->e;
    int rv = c->upstream ? nghttp2_session_client_new3(&c->s, e->cbs, c, e->opt, &e->mem)
                         : nghttp2_session_server_new3(&c->s, e->cbs, c, e->opt, &e->mem);
    if (rv != 0) {
        tr_say(err, errlen, "nghttp2: %s", nghttp2_strerror(rv));
        return false;
    }
    nghttp2_settings_entry set[] = {
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, HP_STREAM_WINDOW},
        {NGHTTP2_SETTINGS_MAX_FRAME_SIZE, HP_STREAM_WINDOW},
        {c->upstream ? NGHTTP2_SETTINGS_ENABLE_PUSH : NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
         c->upstream ? 0 : HP_MAX_STREAMS},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, HP_MAX_HEADER_LIST},
    };
    size_t nset = 4;
    if (nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, set, nset) != 0 ||
        nghttp2_session_set_local_window_size(c->s, NGHTTP2_FLAG_NONE, 0, HP_CONN_WINDOW) != 0) {
        tr_say(err, errlen, "nghttp2: cannot set the windows");
        return false;
    }
    return true;
}

/* A connection on fd; its ring *ring when given (taken: made before the
 * socket was accepted), else one made now. */
static hp_conn *conn_new(hp_engine *e, int fd, bool upstream, rb_ring *ring, char *err,
                         size_t errlen)
{
    hp_conn *c = xmalloc(e, sizeof *c);
    if (c == NULL) {
        tr_say(err, errlen, "out of memory");
        if (ring != NULL)
            rb_destroy(ring);
        close(fd);
        return NULL;
    }
    memset(c, 0, sizeof *c);
    c->e = e;
    c->fd = fd;
    c->upstream = upstream;
    c->w.preface = upstream ? 0 : HP_PREFACE;
    win_init(&c->win, NGHTTP2_INITIAL_WINDOW_SIZE);
    if (ring != NULL) {
        c->ring = *ring;
    } else if (rb_init(&c->ring, HP_RING, RB_MIRROR, err, errlen) != 0) {
        close(fd);
        free(c);
        return NULL;
    } else {
        e->st.allocations += c->ring.allocations;
    }
    if (!session_new(c, err, errlen)) {
        rb_destroy(&c->ring);
        close(fd);
        free(c);
        return NULL;
    }
    struct epoll_event x = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(e->ep, EPOLL_CTL_ADD, fd, &x) != 0) {
        tr_say(err, errlen, "epoll: %s", strerror(errno));
        nghttp2_session_del(c->s);
        rb_destroy(&c->ring);
        close(fd);
        free(c);
        return NULL;
    }
    c->events = EPOLLIN;
    c->next = e->conns;
    if (e->conns)
        e->conns->prev = c;
    e->conns = c;
    idle_enter(c);
    mark_dirty(c);
    return c;
}

/* Frees the closed connections that nothing points into any more (no
 * message that arrived on them is alive), at the end of the loop's turn,
 * never under a caller that may still hold one; all: every closed one
 * (hp_free, after every message is gone). */
static void conn_reap(hp_engine *e, bool all)
{
    for (hp_conn *c = e->conns, *next; c != NULL; c = next) {
        next = c->next;
        if (!c->closed || c->dirty || (!all && c->nmsgs > 0))
            continue;
        if (c->prev)
            c->prev->next = c->next;
        else
            e->conns = c->next;
        if (c->next)
            c->next->prev = c->prev;
        e->held -= c->ring.len;
        rb_destroy(&c->ring);
        free(c);
    }
}

/* One line to cfg.log: who, then fmt; at most HP_LOG_PER_S a second. */
static void engine_vlog(hp_engine *e, const char *who, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void engine_vlog(hp_engine *e, const char *who, const char *fmt, va_list ap)
{
    if (e->cfg.log == NULL)
        return;
    uint64_t sec = clk_now_ns() / 1000000000u;
    if (sec != e->log_sec) {
        e->log_sec = sec;
        e->log_n = 0;
    }
    if (e->log_n >= HP_LOG_PER_S) {
        e->log_skipped++;
        return;
    }
    e->log_n++;
    char skipped[48] = "", line[600];
    if (e->log_skipped > 0)
        snprintf(skipped, sizeof skipped, "(%llu lines left out) ",
                 (unsigned long long)e->log_skipped);
    e->log_skipped = 0;
    /* who is a connection's name (< NET_NAME_LEN + 32): both fit */
    int k = snprintf(line, sizeof line, "%s%s", skipped, who);
    vsnprintf(line + k, sizeof line - (size_t)k, fmt, ap);
    e->cfg.log(e->cfg.log_ctx, line);
}

static void engine_log(hp_engine *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    engine_vlog(e, "", fmt, ap);
    va_end(ap);
}

/* A line about c: "the connection to the server" or "a client connection
 * from ADDRESS:PORT", then fmt. */
static void conn_vlog(hp_conn *c, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void conn_vlog(hp_conn *c, const char *fmt, va_list ap)
{
    char who[NET_NAME_LEN + 32];
    if (c->upstream)
        snprintf(who, sizeof who, "the connection to the server");
    else
        snprintf(who, sizeof who, "a client connection from %s", c->peer);
    engine_vlog(c->e, who, fmt, ap);
}

static void conn_log(hp_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void conn_log(hp_conn *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    conn_vlog(c, fmt, ap);
    va_end(ap);
}

/* c is ended by an error: counted in connections_failed and logged, once. */
static void conn_error(hp_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void conn_error(hp_conn *c, const char *fmt, ...)
{
    if (c->failed)
        return;
    c->failed = true;
    c->e->st.connections_failed++;
    va_list ap;
    va_start(ap, fmt);
    conn_vlog(c, fmt, ap);
    va_end(ap);
}

/* A GOAWAY with an error code on c: received, the peer says we erred (a
 * line); sent, nghttp2 ends the session for what the peer sent (an error).
 * refused: received, but refused by nghttp2 (its error code; 0 when not):
 * said with what it held all the same, or the peer's reason for leaving
 * would be lost behind nghttp2's for refusing it. */
static void goaway_seen(hp_conn *c, bool sent, const nghttp2_goaway *g, int refused)
{
    int n = g->opaque_data_len < 200 ? (int)g->opaque_data_len : 200;
    const char *data = n > 0 ? (const char *)g->opaque_data : "";
    const char *code = nghttp2_http2_strerror(g->error_code);
    /* nghttp2's own GOAWAY for a header block it cannot decode says
     * nothing: the usual cause, then (HPACK takes a field of up to 64 KiB,
     * name and value, and one it cannot decode ends the connection) */
    const char *why = sent && n == 0 && g->error_code == NGHTTP2_COMPRESSION_ERROR
                          ? " (a header block it cannot decode: a field over 64 KiB?)"
                          : "";
    if (sent)
        conn_error(c, ": the proxy sent GOAWAY %s%s%s%.*s", code, why, n > 0 ? ": " : "", n, data);
    else if (refused == 0)
        conn_log(c, ": the peer sent GOAWAY %s: %.*s", code, n, data);
    else
        conn_log(c, ": the peer sent GOAWAY %s, last stream %d: %.*s (refused: %s)", code,
                 (int)g->last_stream_id, n, data, nghttp2_strerror(refused));
}

/* A frame nghttp2 refused (it answers with RST_STREAM or GOAWAY itself): a
 * GOAWAY is said (goaway_seen). */
static int on_invalid_frame(nghttp2_session *s, const nghttp2_frame *f, int lib_error, void *ud)
{
    (void)s;
    if (f->hd.type == NGHTTP2_GOAWAY)
        goaway_seen(ud, false, &f->goaway, lib_error);
    return 0;
}

/* The connection is gone (or given up): its calls learn it, its queue is
 * dropped, its session deleted. The struct (and its ring, which messages
 * queued elsewhere may still point into) lives until nothing holds it. */
static void conn_fail(hp_conn *c, const char *why)
{
    hp_engine *e = c->e;
    if (c->closed)
        return;
    /* an error: anything but the peer leaving with no call open, the end
     * of the session (GOAWAY both ways, idleness) or the stop */
    if (why != why_session_ended && why != why_stopped &&
        (why != why_peer_closed || c->calls != NULL))
        conn_error(c, "%s: %s",
                   c->upstream ? "" : c->calls == NULL ? ", no call open" : ", calls open", why);
    c->closed = true;
    if (!c->upstream) {
        e->nclients--;
        listen_update(e); /* it may have been at max_connections */
    }
    idle_leave(c);
    c->at_head = NULL;
    c->nholes = 0;
    if (e->up == c)
        e->up = NULL;
    epoll_ctl(e->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    while (c->calls != NULL) {
        hp_call *k = c->calls;
        if (c->upstream) {
            call_unlink(k, SIDE_U);
            half_drop(&k->req);
            if (!k->failed && k->dc != NULL && !k->rsp.ended) {
                char m[400];
                snprintf(m, sizeof m, "proxy: the connection to the server failed: %s", why);
                call_fail(k, 14, m);
            } else {
                call_maybe_free(k);
            }
        } else {
            call_close_d(k, true);
        }
    }
    while (c->oq_n > 0) {
        hp_msg *m = c->oq_msg[c->oq_head];
        c->oq_msg[c->oq_head] = NULL;
        c->oq_head = (c->oq_head + 1) % HP_OQ;
        c->oq_n--;
        if (m != NULL && --m->refs == 0 && !m->queued)
            msg_done(m);
    }
    nghttp2_session_del(c->s);
    c->s = NULL;
    conn_advance(c);
}

/* n bytes written at the ring's write position are now held. */
static void ring_commit(hp_conn *c, size_t n)
{
    hp_engine *e = c->e;
    rb_commit(&c->ring, n);
    e->held += n;
    if (e->held > e->st.peak_held)
        e->st.peak_held = e->held;
    size_t end = c->ring.r + c->ring.len; /* where the first mapping was written to */
    if (end > c->ring.cap)
        end = c->ring.cap; /* it wrapped: all of it */
    if (end > c->touched)
        c->touched = end;
    if (e->sweep_ns == 0)
        e->sweep_ns = clk_now_ns() + HP_SWEEP_MS * 1000000ull;
}

/* n bytes a read put at p (in the ring or beside it) go to the walk and
 * to nghttp2, in the order they came. false: c failed. */
static bool take(hp_conn *c, const uint8_t *p, size_t n)
{
    walk(c, p, n);
    ssize_t rv = nghttp2_session_mem_recv(c->s, p, n);
    if (c->closed)
        return false;
    if (rv < 0) {
        conn_fail(c, nghttp2_strerror((int)rv));
        return false;
    }
    return true;
}

/* The sender's window on c is spent, no credit is left to announce, and
 * every byte c holds belongs to a message not yet whole (calls sending
 * messages of the largest size side by side, more of them than the
 * connection's window holds): none can become whole, so none would give
 * credit back, and every call on c would wait, the shared connection to
 * the server included. The call whose message holds the most is failed
 * (RESOURCE_EXHAUSTED, window_failed counts it): its bytes go back, and
 * the others go on. */
static void window_deadlock(hp_conn *c)
{
    if (c->s == NULL || c->unreturned == 0 || nghttp2_session_get_local_window_size(c->s) != 0 ||
        nghttp2_session_get_effective_recv_data_length(c->s) > (int64_t)c->unreturned)
        return;
    int side = c->upstream ? SIDE_U : SIDE_D;
    uint64_t incomplete = 0, most = 0;
    hp_call *worst = NULL;
    for (hp_call *k = c->calls; k != NULL; k = k->next[side]) {
        hp_half *h = half_from(c, k);
        uint64_t held = h->cur != NULL ? h->cur->credit : 0;
        incomplete += held;
        if (held > most)
            most = held, worst = k;
    }
    if (worst == NULL || incomplete < c->unreturned)
        return; /* a whole message holds some: its credit comes back once it is written */
    c->e->st.window_failed++;
    engine_log(c->e, "%s: the connection's flow-control window is full of messages not yet whole; "
                     "failing the call holding the most (%llu bytes)",
               c->upstream ? "server" : c->peer, (unsigned long long)most);
    call_fail(worst, 8,
              "proxy: too many large messages at once on one connection: its flow-control "
              "window filled before any was whole");
}

/* nghttp2 read what a read brought: the ring goes back as far as it can,
 * and the connection is pumped when its session has frames to send (its
 * SETTINGS or PING acknowledgements, WINDOW_UPDATEs) or nothing more to
 * read (it ended); what the read brought for other connections marked
 * those, which are pumped without waiting behind this one. */
static void read_done(hp_conn *c)
{
    c->parsed = c->ring.consumed + c->ring.len;
    conn_advance(c);
    credit_check(c, 0, c->unreturned);
    window_deadlock(c);
    if (nghttp2_session_want_write(c->s) || !nghttp2_session_want_read(c->s))
        mark_dirty(c);
}

/* The most the next read may take, at most room: no further than a point
 * where the connection's sender, or the sender of the stream whose DATA
 * came last, may have stopped for want of window. Such a read ends where
 * that DATA frame ends, so that a message it cuts can have its rest placed
 * after it (framing_check). *by gets the stream whose window set the
 * limit (0: the connection's; -1: none), *rx what it had received. */
static size_t read_limit(hp_conn *c, size_t room, int32_t *by, uint64_t *rx)
{
    *by = -1;
    uint64_t lim = win_room(&c->win);
    if (lim < room) {
        room = (size_t)lim;
        *by = 0;
        *rx = c->win.rx;
    }
    hp_half *h = c->w.type == NGHTTP2_DATA ? conn_half(c, c->w.sid) : NULL;
    if (h != NULL && (lim = win_room(&h->win)) < room) {
        room = (size_t)lim;
        *by = c->w.sid;
        *rx = h->win.rx;
    }
    return room;
}

/* After a read that ended inside or at the end of a frame f (left: its
 * payload bytes still to come), with nothing after them in the ring. When
 * f is DATA that ends before the message it carries does, reads go a
 * frame at a time (framed reads, c->framed), so that the next frame's
 * header goes beside the ring and the message's next part right after
 * the part before; the message's payload so far ending at the ring's
 * write position, it is c->at_head, and when another stream's DATA comes
 * first, room is kept for its rest. A framed read is a system call a
 * frame, which costs about what gathering the cut message would when
 * frames are short: a frame shorter than HP_PLACE_FRAME is left to the
 * gathering, unless the read ended at the edge of the sender's window
 * (edge), where it stopped once. A sender that frames its streams
 * without regard to messages (a cut that is no window's edge, or one
 * that this read found inside it: cut, the message was gathered) gets
 * framed reads for its next HP_CUT_FRAMES DATA frames at least, the
 * first frames of its next streams included. */
static void framing_check(hp_conn *c, const hp_walk *f, uint32_t left, bool edge, bool cut)
{
    if (c->closed) {
        c->framed = false;
        return;
    }
    if (f->type != NGHTTP2_DATA)
        return; /* other frames between DATA frames change nothing */
    bool whole = f->len >= HP_PLACE_FRAME; /* worth a read of its own */
    if (cut && whole)
        c->cutting = HP_CUT_FRAMES;
    bool goes_on = false; /* its stream's message goes on after f */
    hp_msg *m = NULL;
    if (f->sid > 0 && !(f->flags & (NGHTTP2_FLAG_PADDED | NGHTTP2_FLAG_END_STREAM))) {
        hp_half *h = conn_half(c, f->sid);
        m = h != NULL ? h->cur : NULL;
        if (m == NULL || h->call->failed || m->src != c)
            m = NULL;
        else if (h->hdr_have < HP_PREFIX) {
            goes_on = left == 0; /* it goes on in the next frame: nothing to place yet */
            m = NULL;
        } else {
            goes_on = left < m->n - m->got;
        }
    }
    if (goes_on && whole && !edge)
        c->cutting = HP_CUT_FRAMES;
    else if (left == 0 && !goes_on && c->cutting > 0)
        c->cutting--;
    bool place = goes_on && (whole || edge);
    c->framed = place || (cut && whole && left > 0) || c->cutting > 0;
    /* a gathered one is framed too: its rest is read into its buffer */
    if (place && m != NULL && m->heap == NULL && m->got > 0 && m->hole_left == 0 &&
        m->body + m->got == c->ring.consumed + c->ring.len) {
        if (c->at_head == NULL && c->nholes == 0)
            c->hole_reads = 0; /* the first to wait: counting starts */
        c->at_head = m;
        m->placed = true;
    }
}

/* Room for the rest of c->at_head is kept at the write position, before
 * another stream's DATA goes there; without the room (too little ring, or
 * HP_HOLES rooms kept already), the message will be gathered. */
static void keep_room(hp_conn *c)
{
    hp_msg *a = c->at_head;
    c->at_head = NULL;
    size_t room, need = a->n - a->got;
    rb_space(&c->ring, &room);
    if (c->nholes == HP_HOLES || room < need + RB_READ_CHUNK)
        return;
    a->hole_at = c->ring.consumed + c->ring.len;
    a->hole_left = (uint32_t)need;
    c->holes[c->nholes++] = a;
    ring_commit(c, need);
}

/* Framed reads gave up waiting: the messages waiting will be gathered. */
static void unplace_all(hp_conn *c)
{
    c->at_head = NULL;
    while (c->nholes > 0)
        msg_unplace(c->holes[c->nholes - 1]);
    c->hole_reads = 0;
}

static bool framing(const hp_conn *c)
{
    return c->framed || c->at_head != NULL || c->nholes > 0;
}

enum { PIECE_RING, PIECE_HOLE, PIECE_HEAP, PIECE_SIDE, PIECE_HEADER };

/* One framed read: the rest of the current frame and the next frame's
 * header, nothing beyond, so that each frame's payload goes where it
 * belongs: DATA at the write position, but first into the room kept for
 * its stream's message if there is one, or into the message's own buffer
 * if it was gathered (so its rest is not copied too); frame headers and
 * the payloads of other frames (nghttp2 keeps what it needs of them)
 * beside the ring.
 * 1: go on reading; 0: stop for now; -1: c failed. */
static int framed_read(hp_conn *c)
{
    hp_engine *e = c->e;
    const hp_walk *w = &c->w;
    hp_walk f = *w; /* the frame this read ends (or goes on with) */
    if ((c->at_head != NULL || c->nholes > 0) && ++c->hole_reads > HP_HOLE_READS)
        unplace_all(c);
    size_t room;
    uint8_t *head = rb_space(&c->ring, &room);
    struct iovec iov[3];
    int kind[3], n = 0;
    size_t payload = 0;
    hp_msg *hm = NULL; /* the message whose room, or buffer, the frame fills first */
    if (w->left > 0 && w->type == NGHTTP2_DATA) {
        hp_half *h = conn_half(c, w->sid);
        hm = h != NULL && h->cur != NULL && h->cur->src == c && h->hdr_have == HP_PREFIX &&
                     (h->cur->hole_left > 0 || h->cur->heap != NULL)
                 ? h->cur
                 : NULL;
        if (hm != NULL && (w->flags & NGHTTP2_FLAG_PADDED)) {
            msg_unplace(hm); /* padding between its parts: gathered */
            hm = NULL;
        }
        if (hm != NULL && hm->hole_left > 0) {
            payload = w->left < hm->hole_left ? w->left : hm->hole_left;
            iov[n] = (struct iovec){(void *)ring_at(c, hm->hole_at), payload};
            kind[n++] = PIECE_HOLE;
        } else if (hm != NULL && hm->got < hm->n) {
            payload = w->left < hm->n - hm->got ? w->left : hm->n - hm->got;
            iov[n] = (struct iovec){hm->heap + hm->got, payload};
            kind[n++] = PIECE_HEAP;
        }
        if (payload < w->left) {
            if (c->at_head != NULL &&
                (c->at_head->src_sid != w->sid || (w->flags & NGHTTP2_FLAG_PADDED))) {
                keep_room(c);
                head = rb_space(&c->ring, &room);
            }
            size_t t = w->left - payload < room ? w->left - payload : room;
            if (t > 0) {
                iov[n] = (struct iovec){head, t};
                kind[n++] = PIECE_RING;
                payload += t;
            }
        }
    } else if (w->left > 0) {
        payload = w->left < HP_SIDE ? w->left : HP_SIDE;
        iov[n] = (struct iovec){e->side, payload};
        kind[n++] = PIECE_SIDE;
    }
    if (payload == 0 && w->left > 0) { /* no room in the ring */
        c->paused = true;
        conn_events(c);
        return 0;
    }
    if (payload == w->left) {
        iov[n] = (struct iovec){c->hb, HP_FRAME_HD - w->fh_have};
        kind[n++] = PIECE_HEADER;
    }
    size_t asked = 0;
    for (int i = 0; i < n; i++)
        asked += iov[i].iov_len;
    ssize_t r = readv(c->fd, iov, n);
    if (r < 0) {
        if (errno == EINTR)
            return 1;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        conn_fail(c, why_errno(errno));
        return -1;
    }
    if (r == 0) {
        conn_fail(c, why_peer_closed);
        return -1;
    }
    c->reads++;
    e->reads++;
    /* every piece is accounted for before nghttp2 sees any: a message
     * that the first piece (its room) completes may be done with at once,
     * and were the ring then empty, it would start over at its front, away
     * from where the read put the bytes not yet committed */
    size_t left = (size_t)r, got = 0, len[3] = {0, 0, 0};
    for (int i = 0; i < n && left > 0; i++) {
        size_t g = left < iov[i].iov_len ? left : iov[i].iov_len;
        left -= g;
        len[i] = g;
        if (kind[i] != PIECE_HEADER)
            got += g;
        if (kind[i] == PIECE_RING) {
            ring_commit(c, g);
        } else if (kind[i] == PIECE_HOLE) {
            hm->hole_at += g;
            hm->hole_left -= (uint32_t)g;
            if (hm->hole_left == 0)
                msg_unplace(hm); /* filled: nothing more goes there */
        }
    }
    for (int i = 0; i < n && len[i] > 0; i++)
        if (!take(c, iov[i].iov_base, len[i]))
            return -1;
    read_done(c);
    if (got < f.left)
        c->framed = true; /* on to the frame's end */
    else /* it may cut the next message too (the next header, when it came, lies beside the ring) */
        framing_check(c, &f, 0, false, false);
    return (size_t)r == asked ? 1 : 0;
}

/* Reads what c's socket has into its ring (up to HP_READS reads, framed
 * reads aside), hands it to nghttp2 and gives the ring back as far as the
 * messages allow. */
static void conn_read(hp_conn *c)
{
    hp_engine *e = c->e;
    for (int i = 0; i < HP_READS && !c->closed; i++) {
        if (c->ring.cap - c->ring.len < c->ring.cap / 4)
            conn_evacuate(c);
        size_t room;
        uint8_t *w = rb_space(&c->ring, &room);
        if (room == 0 || c->nmsgs >= HP_MAX_HELD_MSGS) {
            c->paused = true;
            conn_events(c);
            return;
        }
        if (framing(c)) {
            int rc = framed_read(c);
            if (rc <= 0)
                return;
            i--; /* a frame's worth: not one of the HP_READS */
            continue;
        }
        if (room > RB_READ_CHUNK)
            room = RB_READ_CHUNK;
        int32_t by;
        uint64_t by_rx = 0;
        size_t want = read_limit(c, room, &by, &by_rx);
        ssize_t r = read(c->fd, w, want);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            conn_fail(c, why_errno(errno));
            return;
        }
        if (r == 0) {
            conn_fail(c, why_peer_closed);
            return;
        }
        c->reads++;
        e->reads++;
        ring_commit(c, (size_t)r);
        /* Messages dropped while nghttp2 reads may give the ring back, but
         * only up to parsed: the bytes of this read are not yet read. */
        if (!take(c, w, (size_t)r))
            return;
        read_done(c);
        bool edge = false;
        if (by >= 0 && (size_t)r == want) {
            hp_window *bw = by == 0 ? &c->win : NULL;
            hp_half *h = by > 0 ? conn_half(c, by) : NULL;
            if (h != NULL)
                bw = &h->win;
            if (bw != NULL) {
                /* it ended at the edge (only DATA bytes read), and so did
                 * a frame: a frame that goes on was sent past it, so the
                 * sender did not stop there */
                edge = bw->rx == by_rx + want && c->w.left == 0;
                win_strike(bw, by_rx);
            }
        }
        if (c->w.preface == 0 && c->w.fh_have == 0) /* no header bytes after it */
            framing_check(c, &c->w, c->w.left, edge, c->cut);
        c->cut = false;
        if ((size_t)r < want)
            return;
    }
}

/* ---- giving memory back */

/* Every HP_SWEEP_MS while something may be given back: a connection that
 * read nothing since the last sweep and holds nothing gives its ring's
 * pages back (the memfd's pages are freed, not only unmapped: both
 * mappings read zeros again); when no connection read anything, the kept
 * gathering buffers are freed too. */
static void sweep(hp_engine *e, uint64_t now)
{
    bool more = false;
    for (hp_conn *c = e->conns; c != NULL; c = c->next) {
        if (c->closed || c->touched == 0)
            continue;
        if (c->ring.len == 0 && c->reads == c->reads_swept) {
            if (madvise(c->ring.base, c->touched, MADV_REMOVE) == 0 ||
                madvise(c->ring.base, c->touched, MADV_DONTNEED) == 0)
                e->st.ring_bytes_released += c->touched;
            c->touched = 0;
        } else {
            more = true;
        }
        c->reads_swept = c->reads;
    }
    if (e->reads == e->reads_swept)
        buf_drop_kept(e);
    else
        more = true;
    e->reads_swept = e->reads;
    e->sweep_ns = more || e->buf_kept_bytes > 0 ? now + HP_SWEEP_MS * 1000000ull : 0;
}

/* ---- stopping */

static void drain_start(hp_engine *e)
{
    if (e->draining) {
        /* asked again: stop now; but not for the copy of one signal that
         * arrives twice (`timeout` sends it to the child and its group) */
        if (clk_now_ns() - e->drain_ns > 1000000000u)
            e->deadline_ns = clk_now_ns();
        return;
    }
    e->drain_ns = clk_now_ns();
    e->draining = true;
    e->deadline_ns = clk_now_ns() + (uint64_t)e->cfg.grace_ms * 1000000u;
    listen_update(e); /* draining: unwatched */
    if (e->lfd >= 0) {
        close(e->lfd);
        e->lfd = -1;
    }
    for (hp_conn *c = e->conns; c != NULL; c = c->next)
        if (!c->closed && !c->upstream) {
            nghttp2_submit_goaway(c->s, NGHTTP2_FLAG_NONE,
                                  nghttp2_session_get_last_proc_stream_id(c->s),
                                  NGHTTP2_NO_ERROR, NULL, 0);
            mark_dirty(c);
        }
}

/* The grace period is over: every call left is reset both ways. */
static void cancel_all(hp_engine *e)
{
    for (hp_conn *c = e->conns; c != NULL; c = c->next) {
        if (c->closed || c->upstream)
            continue;
        for (hp_call *k = c->calls; k != NULL; k = k->next[SIDE_D]) {
            nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, k->dsid, NGHTTP2_CANCEL);
            if (!k->failed)
                e->st.calls_cancelled++;
            k->failed = true;
        }
        mark_dirty(c);
    }
    for (hp_conn *c = e->conns; c != NULL; c = c->next) {
        if (c->closed || !c->upstream)
            continue;
        for (hp_call *k = c->calls; k != NULL; k = k->next[SIDE_U])
            if (k->usid > 0)
                nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, k->usid, NGHTTP2_CANCEL);
        mark_dirty(c);
    }
}

/* ---- the engine */

/* Whether max_connections client connections are open. */
static bool at_most_clients(const hp_engine *e)
{
    return e->cfg.max_connections > 0 && e->nclients >= (unsigned)e->cfg.max_connections;
}

/* The listening socket is watched unless accepting is paused (out of
 * descriptors for a while: accept_ns; at max_connections) or over (the
 * drain). */
static void listen_update(hp_engine *e)
{
    bool want = e->lfd >= 0 && !e->draining && e->accept_ns == 0 && !at_most_clients(e);
    if (want == e->listen_watched)
        return;
    struct epoll_event x = {.events = EPOLLIN, .data.ptr = &e->tag_listen};
    epoll_ctl(e->ep, want ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, e->lfd, &x);
    e->listen_watched = want;
}

/* The next client connection's ring, made before its socket is accepted
 * (it is made through a descriptor of its own for a moment, a memfd closed
 * once mapped): a connection accepted as descriptors or memory run out is
 * never then dropped for want of its ring. false, err set: none could be
 * made. */
static bool spare_make(hp_engine *e, char *err, size_t errlen)
{
    if (!e->spare_ready && rb_init(&e->spare, HP_RING, RB_MIRROR, err, errlen) == 0) {
        e->spare_ready = true;
        e->st.allocations += e->spare.allocations;
    }
    return e->spare_ready;
}

/* Out of descriptors or memory: the listening socket is left unwatched for
 * a while (its connections stay queued, and it stays readable) rather than
 * the loop spinning on it. */
static void accept_pause(hp_engine *e, const char *why)
{
    engine_log(e, "cannot accept a connection: %s; accepting again in %d ms", why,
               HP_ACCEPT_PAUSE_MS);
    e->accept_ns = clk_now_ns() + HP_ACCEPT_PAUSE_MS * 1000000ull;
    listen_update(e);
}

static void accept_all(hp_engine *e)
{
    for (int i = 0; i < 64 && e->lfd >= 0; i++) {
        if (at_most_clients(e)) {
            /* watched until now: the socket is left unwatched, and the
             * connection waits in its backlog until one closes */
            e->st.accept_limited++;
            engine_log(e, "%u client connections open, the most: accepting again when one "
                          "closes", e->nclients);
            listen_update(e);
            return;
        }
        char err[NET_ERR_LEN];
        if (!spare_make(e, err, sizeof err)) {
            accept_pause(e, err);
            return;
        }
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(e->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                accept_pause(e, strerror(errno));
            return; /* EAGAIN, or a connection that failed before we took it */
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        e->spare_ready = false; /* the connection's now, or freed with it */
        hp_conn *c = conn_new(e, fd, false, &e->spare, err, sizeof err);
        if (c == NULL) {
            char peer[NET_NAME_LEN];
            net_sockaddr_name(&ss, peer, sizeof peer);
            e->st.connections_failed++;
            engine_log(e, "cannot take a connection from %s: %s", peer, err);
            continue;
        }
        net_sockaddr_name(&ss, c->peer, sizeof c->peer);
        e->st.connections++;
        e->nclients++;
    }
}

static void pump_dirty(hp_engine *e)
{
    for (int rounds = 0; e->dirty != NULL && rounds < 100000; rounds++) {
        hp_conn *c = e->dirty;
        e->dirty = c->dnext;
        if (e->dirty == NULL)
            e->dirty_tail = NULL;
        c->dirty = false;
        pump(c);
    }
}

hp_engine *hp_new(const hp_config *cfg, char *err, size_t errlen)
{
    hp_engine *e = calloc(1, sizeof *e);
    if (e == NULL) {
        tr_say(err, errlen, "out of memory");
        close(cfg->listen_fd);
        return NULL;
    }
    e->st.allocations = 1;
    e->cfg = *cfg;
    if (e->cfg.grace_ms <= 0)
        e->cfg.grace_ms = 5000;
    if (e->cfg.connect_ms <= 0)
        e->cfg.connect_ms = HP_CONNECT_MS;
    if (e->cfg.idle_ms == 0)
        e->cfg.idle_ms = HP_IDLE_MS;
    if (e->cfg.max_connections == 0)
        e->cfg.max_connections = HP_MAX_CONNECTIONS;
    e->idle_ns = e->cfg.idle_ms > 0 ? (uint64_t)e->cfg.idle_ms * 1000000u : 0;
    e->busy_ns = e->cfg.busy_poll_us > 0 ? (uint64_t)e->cfg.busy_poll_us * 1000u : 0;
    e->lfd = cfg->listen_fd;
    e->ep = -1;
    e->efd = -1;
    snprintf(e->upstream, sizeof e->upstream, "%s", cfg->upstream);
    net_addr a;
    if (net_parse_addr(cfg->upstream, &a, err, errlen) != 0)
        goto fail;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    char port[8];
    snprintf(port, sizeof port, "%u", (unsigned)a.port);
    int g = getaddrinfo(a.host[0] ? a.host : "127.0.0.1", port, &hints, &res);
    if (g != 0 || res == NULL) {
        tr_say(err, errlen, "cannot resolve %s: %s", cfg->upstream, gai_strerror(g));
        goto fail;
    }
    memcpy(&e->up_addr, res->ai_addr, res->ai_addrlen);
    e->up_len = res->ai_addrlen;
    freeaddrinfo(res);

    e->mem = (nghttp2_mem){e, h2_malloc, h2_free, h2_calloc, h2_realloc};
    if (nghttp2_session_callbacks_new(&e->cbs) != 0 || nghttp2_option_new(&e->opt) != 0) {
        tr_say(err, errlen, "out of memory");
        goto fail;
    }
    e->st.allocations += 2;
    nghttp2_option_set_no_auto_window_update(e->opt, 1);
    nghttp2_option_set_peer_max_concurrent_streams(e->opt, 1000);
    nghttp2_session_callbacks_set_send_callback(e->cbs, send_cb);
    nghttp2_session_callbacks_set_send_data_callback(e->cbs, send_data);
    nghttp2_session_callbacks_set_data_source_read_length_callback(e->cbs, read_length);
    nghttp2_session_callbacks_set_on_begin_headers_callback(e->cbs, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(e->cbs, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(e->cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(e->cbs, on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(e->cbs, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_send_callback(e->cbs, on_frame_send);
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(e->cbs, on_invalid_frame);

    e->ep = epoll_create1(EPOLL_CLOEXEC);
    e->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (e->ep < 0 || e->efd < 0) {
        tr_say(err, errlen, "epoll: %s", strerror(errno));
        goto fail;
    }
    int fl = fcntl(e->lfd, F_GETFL);
    if (fl < 0 || fcntl(e->lfd, F_SETFL, fl | O_NONBLOCK) != 0) {
        tr_say(err, errlen, "listening socket: %s", strerror(errno));
        goto fail;
    }
    struct epoll_event x = {.events = EPOLLIN, .data.ptr = &e->tag_listen};
    struct epoll_event y = {.events = EPOLLIN, .data.ptr = &e->tag_efd};
    struct epoll_event z = {.events = EPOLLIN, .data.ptr = &e->tag_stop};
    if (epoll_ctl(e->ep, EPOLL_CTL_ADD, e->lfd, &x) != 0 ||
        epoll_ctl(e->ep, EPOLL_CTL_ADD, e->efd, &y) != 0 ||
        (cfg->stop_fd >= 0 && epoll_ctl(e->ep, EPOLL_CTL_ADD, cfg->stop_fd, &z) != 0)) {
        tr_say(err, errlen, "epoll: %s", strerror(errno));
        goto fail;
    }
    e->listen_watched = true;
    return e;
fail:
    hp_free(e);
    return NULL;
}

void hp_stop(hp_engine *e)
{
    uint64_t one = 1;
    ssize_t r = write(e->efd, &one, sizeof one);
    (void)r;
}

const hp_stats *hp_stats_of(const hp_engine *e)
{
    return &e->st;
}

int hp_run(hp_engine *e, char *err, size_t errlen)
{
    struct epoll_event ev[64];
    for (;;) {
        pump_dirty(e);
        conn_reap(e, false);
        if (e->draining && e->ncalls == 0)
            break;
        int timeout = -1;
        uint64_t now = clk_now_ns();
        if (e->draining) {
            if (now >= e->deadline_ns) {
                cancel_all(e);
                pump_dirty(e);
                break;
            }
            timeout = (int)((e->deadline_ns - now) / 1000000u) + 1;
        }
        if (e->idle_ns > 0 && e->idle_head != NULL) {
            uint64_t at = idle_expire(e, now);
            if (e->dirty != NULL)
                continue; /* GOAWAYs to send */
            if (at != UINT64_MAX) {
                int t = (int)((at - now) / 1000000u) + 1;
                if (timeout < 0 || t < timeout)
                    timeout = t;
            }
        }
        if (e->sweep_ns != 0) {
            if (now >= e->sweep_ns)
                sweep(e, now);
            if (e->sweep_ns != 0) {
                int t = (int)((e->sweep_ns - now) / 1000000u) + 1;
                if (timeout < 0 || t < timeout)
                    timeout = t;
            }
        }
        if (e->accept_ns != 0 && e->lfd >= 0) {
            if (now >= e->accept_ns) {
                e->accept_ns = 0;
                listen_update(e);
            } else {
                int t = (int)((e->accept_ns - now) / 1000000u) + 1;
                if (timeout < 0 || t < timeout)
                    timeout = t;
            }
        }
        /* a server that does not answer the connect, or accepts it and
         * sends no SETTINGS (an HTTP/2 server's first frame): its calls
         * would wait on it for ever */
        if (e->up != NULL && (e->up->connecting || !e->up->greeted)) {
            if (now >= e->up->connect_deadline) {
                char m[400];
                snprintf(m, sizeof m, "cannot connect to %s: %s in %d ms", e->upstream,
                         e->up->connecting ? "no answer" : "connected, but no HTTP/2 SETTINGS",
                         e->cfg.connect_ms);
                conn_fail(e->up, m);
                continue;
            }
            int t = (int)((e->up->connect_deadline - now) / 1000000u) + 1;
            if (timeout < 0 || t < timeout)
                timeout = t;
        }
        /* busy polling: what comes within busy_ns of the last event is
         * taken without the loop's thread going to sleep and being woken,
         * the most of a hop's latency on a loaded or virtual machine; at
         * the price of that much CPU after each event */
        int n = 0;
        bool spin = e->busy_ns > 0 && timeout != 0;
        while (spin && (n = epoll_wait(e->ep, ev, 64, 0)) == 0)
            spin = clk_now_ns() - e->event_ns < e->busy_ns;
        if (n == 0)
            n = epoll_wait(e->ep, ev, 64, timeout);
        if (n > 0 && e->busy_ns > 0)
            e->event_ns = clk_now_ns();
        if (n < 0) {
            if (errno == EINTR)
                continue;
            tr_say(err, errlen, "epoll_wait: %s", strerror(errno));
            return -1;
        }
        for (int i = 0; i < n; i++) {
            void *p = ev[i].data.ptr;
            if (p == &e->tag_listen) {
                accept_all(e);
            } else if (p == &e->tag_efd || p == &e->tag_stop) {
                uint8_t buf[128];
                ssize_t r = read(p == &e->tag_efd ? e->efd : e->cfg.stop_fd, buf, sizeof buf);
                (void)r;
                drain_start(e);
            } else {
                hp_conn *c = p;
                if (c->closed)
                    continue;
                if (c->connecting) {
                    connected(c);
                    continue;
                }
                if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                    conn_read(c);
                if (!c->closed && (ev[i].events & EPOLLOUT))
                    mark_dirty(c);
            }
        }
    }
    return 0;
}

void hp_free(hp_engine *e)
{
    if (e == NULL)
        return;
    for (hp_conn *c = e->conns; c != NULL; c = c->next)
        conn_fail(c, why_stopped);
    e->dirty = e->dirty_tail = NULL;
    for (hp_conn *c = e->conns; c != NULL; c = c->next)
        c->dirty = false;
    conn_reap(e, true);
    while (e->free_calls != NULL) {
        hp_call *k = e->free_calls;
        e->free_calls = k->next[SIDE_D];
        hdrs_free(&k->reqh);
        hdrs_free(&k->rsph);
        hdrs_free(&k->trl);
        free(k);
    }
    h2_drop_kept(e);
    buf_drop_kept(e);
    while (e->slabs != NULL) {
        slab *s = e->slabs;
        e->slabs = s->next;
        free(s);
    }
    if (e->lfd >= 0)
        close(e->lfd);
    if (e->efd >= 0)
        close(e->efd);
    if (e->ep >= 0)
        close(e->ep);
    if (e->spare_ready)
        rb_destroy(&e->spare);
    if (e->cbs)
        nghttp2_session_callbacks_del(e->cbs);
    if (e->opt)
        nghttp2_option_del(e->opt);
    free(e);
}

int hp_listen(const char *hostport, int n, int *fds, uint16_t *port, char *err, size_t errlen)
{
    net_addr a;
    if (n < 1 || net_parse_addr(hostport, &a, err, errlen) != 0) {
        if (n < 1)
            tr_say(err, errlen, "cannot listen on %s: no sockets asked for", hostport);
        return -1;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char ps[8];
    snprintf(ps, sizeof ps, "%u", (unsigned)a.port);
    int g = getaddrinfo(a.host[0] ? a.host : NULL, ps, &hints, &res);
    if (g != 0 || res == NULL) {
        tr_say(err, errlen, "cannot listen on %s: %s", hostport, gai_strerror(g));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = res->ai_addrlen;
    memcpy(&ss, res->ai_addr, sl);
    freeaddrinfo(res);
    int i = 0;
    for (; i < n; i++) {
        int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
            setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
            bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, NET_BACKLOG) != 0) {
            tr_say(err, errlen, "cannot listen on %s: %s", hostport, strerror(errno));
            if (fd >= 0)
                close(fd);
            break;
        }
        fds[i] = fd;
        if (i == 0) { /* the others bind the port the first was given */
            socklen_t bl = sizeof ss;
            if (getsockname(fd, (struct sockaddr *)&ss, &bl) != 0) {
                tr_say(err, errlen, "cannot listen on %s: getsockname: %s", hostport,
                       strerror(errno));
                close(fd);
                break;
            }
            sl = bl;
            *port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                             : ntohs(((struct sockaddr_in *)&ss)->sin_port);
        }
    }
    if (i == n)
        return 0;
    while (i-- > 0)
        close(fds[i]);
    return -1;
}

void hp_stats_add(hp_stats *sum, const hp_stats *s)
{
    sum->connections += s->connections;
    sum->connections_failed += s->connections_failed;
    sum->upstream_connections += s->upstream_connections;
    sum->calls += s->calls;
    sum->calls_failed += s->calls_failed;
    sum->window_failed += s->window_failed;
    sum->calls_cancelled += s->calls_cancelled;
    for (int d = 0; d < 2; d++) {
        sum->messages[d] += s->messages[d];
        sum->kept[d] += s->kept[d];
        sum->bytes[d] += s->bytes[d];
        sum->kept_bytes[d] += s->kept_bytes[d];
    }
    sum->bytes_copied += s->bytes_copied;
    sum->messages_copied += s->messages_copied;
    sum->messages_placed += s->messages_placed;
    sum->messages_moved += s->messages_moved;
    sum->idle_closed += s->idle_closed;
    sum->accept_limited += s->accept_limited;
    sum->ring_bytes_released += s->ring_bytes_released;
    sum->allocations += s->allocations;
    sum->h2_allocations += s->h2_allocations;
    sum->peak_held += s->peak_held;
}
