/* net.h: small TCP helpers, in the manner of Redis's anet.c.
 *
 * Addresses are "HOST:PORT" ("[v6addr]:PORT" for IPv6); HOST is a name or a
 * numeric address, resolved with getaddrinfo; an empty HOST means every
 * interface when listening and the loopback interface when connecting.
 *
 * Errors: a function that can fail takes err and errlen and, on failure,
 * writes one line of text there (always NUL-terminated, truncated to fit;
 * err may be NULL) that names what was attempted, e.g.
 * "cannot connect to 127.0.0.1:9: Connection refused". The return value
 * alone says whether it failed; callers never need errno.
 *
 * Descriptors returned belong to the caller, who closes them. Nothing here
 * allocates except getaddrinfo while listening or connecting.
 *
 * SIGPIPE: net_writev_all sends with sendmsg(MSG_NOSIGNAL), so a peer that
 * went away gives an error return, not a signal, on sockets. On a descriptor
 * that is not a socket (a pipe) it falls back to writev, and a caller that
 * writes to pipes must set SIGPIPE to SIG_IGN itself.
 */
#ifndef TR_NET_H
#define TR_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "ringbuf.h"

/* Room for any message these functions write. */
#define NET_ERR_LEN 256
/* Room for net_sockaddr_name's text: an IPv6 address, brackets, a port. */
#define NET_NAME_LEN 56
/* The most net_read_ring asks for in one read. */
#define NET_READ_MAX RB_READ_CHUNK
/* net_read_ring on a non-blocking descriptor with nothing to read. */
#define NET_AGAIN (-2)

typedef struct {
    char host[256]; /* without brackets; "" for none */
    uint16_t port;
} net_addr;

/* Splits "HOST:PORT". Returns 0, or -1 with err set. No name lookup. */
int net_parse_addr(const char *hostport, net_addr *out, char *err,
                   size_t errlen) __attribute__((warn_unused_result));

/* The numeric "ADDRESS:PORT" of an IPv4 or IPv6 socket address ("[ADDRESS]:PORT"
 * for IPv6: what net_parse_addr reads), for messages; "?:0" for another
 * family. Truncated to len. */
void net_sockaddr_name(const struct sockaddr_storage *ss, char *out, size_t len);

/* The backlog of a service's listening socket: connections the kernel
 * completes before the service accepts them (a burst of clients connecting
 * at once past it waits for a SYN retransmit, a second or more). */
#define NET_BACKLOG 128

/* A listening TCP socket on hostport (port 0: an ephemeral port), with
 * SO_REUSEADDR. Returns the descriptor and stores the port actually bound in
 * *bound_port (if not NULL), or returns -1 with err set. */
int net_listen(const char *hostport, int backlog, uint16_t *bound_port,
               char *err, size_t errlen) __attribute__((warn_unused_result));

/* Accepts one connection, retrying on EINTR and ECONNABORTED. Returns the
 * descriptor, or -1 with err set. */
int net_accept(int lfd, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* A connected TCP socket, trying each address hostport resolves to. Returns
 * the descriptor, or -1 with err "cannot connect to HOST:PORT: <reason>". */
int net_connect(const char *hostport, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* Sets TCP_NODELAY. Returns 0, or -1 with err set. */
int net_nodelay(int fd, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* One read into the ring: up to its contiguous room, at most NET_READ_MAX,
 * committed on success. Returns the bytes read (> 0), 0 at end of input,
 * NET_AGAIN when a non-blocking fd has nothing, or -1 with err set (also
 * when the ring has no room, which means the caller holds too much unread).
 * Retries on EINTR. In the flat ring this may move unread bytes (rb_space). */
ssize_t net_read_ring(int fd, rb_ring *rb, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* Writes all of iov[0 .. iovcnt), looping over partial writes and EINTR,
 * any number of entries (sent IOV_MAX at a time), waiting with poll when a
 * non-blocking fd would block. The iov entries are advanced in place as
 * bytes go out, so their contents are unspecified afterwards. Returns 0, or
 * -1 with err set (EPIPE and ECONNRESET: "peer closed the connection"). */
int net_writev_all(int fd, struct iovec *iov, size_t iovcnt, char *err,
                   size_t errlen) __attribute__((warn_unused_result));

/* fork(), and the child gets SIGTERM when this process ends, however it
 * ends, so that the services and peers a program starts on the loopback
 * never outlive it (the signal stays set across exec; a parent gone before
 * it took hold ends the child at once). Returns what fork returned. */
pid_t net_fork_tied(void);

#endif
