/* net.c: TCP helpers with error text in the caller's buffer. */
#include "net.h"

#include "error.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

int net_parse_addr(const char *hostport, net_addr *out, char *err,
                   size_t errlen)
{
    const char *colon = strrchr(hostport, ':');
    if (colon == NULL) {
        tr_say(err, errlen, "bad address '%s': expected HOST:PORT", hostport);
        return -1;
    }
    const char *h = hostport;
    size_t hn = (size_t)(colon - hostport);
    if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') {
        h++;
        hn -= 2;
    } else if (memchr(h, ':', hn) != NULL) {
        tr_say(err, errlen, "bad address '%s': write an IPv6 host as [HOST]:PORT",
            hostport);
        return -1;
    }
    if (hn >= sizeof out->host) {
        tr_say(err, errlen, "bad address '%s': host name too long", hostport);
        return -1;
    }
    const char *ps = colon + 1;
    unsigned long port = 0;
    if (*ps == '\0') {
        tr_say(err, errlen, "bad address '%s': missing port", hostport);
        return -1;
    }
    for (const char *c = ps; *c; c++) {
        if (*c < '0' || *c > '9' || port > 65535) {
            port = 65536;
            break;
        }
        port = port * 10 + (unsigned long)(*c - '0');
    }
    if (port > 65535) {
        tr_say(err, errlen, "bad address '%s': port must be 0..65535", hostport);
        return -1;
    }
    memcpy(out->host, h, hn);
    out->host[hn] = '\0';
    out->port = (uint16_t)port;
    return 0;
}

/* getaddrinfo for a parsed address; returns 0 or the EAI_ code. */
static int resolve(const net_addr *a, bool passive, struct addrinfo **res)
{
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
    char port[8];
    snprintf(port, sizeof port, "%u", (unsigned)a->port);
    return getaddrinfo(a->host[0] ? a->host : NULL, port, &hints, res);
}

static const char *gaitext(int rc, int e, char *buf, size_t n)
{
    return rc == EAI_SYSTEM ? tr_errno_text(e, buf, n) : gai_strerror(rc);
}

/* What to do with a fresh socket for one resolved address: 0 when it is
 * ready (listening, or connected), -1 with errno set to try the next. */
typedef int (*net_step)(int fd, const struct addrinfo *ai, int backlog);

/* Resolves hostport and tries each address with step until one works; the
 * socket, or -1 with "cannot <verb> HOST:PORT: reason" in err. */
static int open_first(const char *hostport, bool passive, net_step step, int backlog,
                      const char *verb, char *err, size_t errlen)
{
    net_addr a;
    char eb[128];
    if (net_parse_addr(hostport, &a, err, errlen) != 0)
        return -1;
    struct addrinfo *res = NULL;
    int rc = resolve(&a, passive, &res);
    if (rc != 0) {
        tr_say(err, errlen, "cannot %s %s: %s", verb, hostport, gaitext(rc, errno, eb, sizeof eb));
        return -1;
    }
    int fd = -1, e = 0;
    for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        if (step(fd, ai, backlog) == 0)
            break;
        e = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        tr_say(err, errlen, "cannot %s %s: %s", verb, hostport, tr_errno_text(e, eb, sizeof eb));
    return fd;
}

static int listen_step(int fd, const struct addrinfo *ai, int backlog)
{
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
        bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        listen(fd, backlog > 0 ? backlog : SOMAXCONN) == 0)
        return 0;
    return -1;
}

int net_listen(const char *hostport, int backlog, uint16_t *bound_port,
               char *err, size_t errlen)
{
    char eb[128];
    int fd = open_first(hostport, true, listen_step, backlog, "listen on", err, errlen);
    if (fd < 0)
        return -1;
    if (bound_port != NULL) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
            int e = errno;
            close(fd);
            tr_say(err, errlen, "cannot listen on %s: getsockname: %s", hostport,
                tr_errno_text(e, eb, sizeof eb));
            return -1;
        }
        *bound_port = ss.ss_family == AF_INET6
                          ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                          : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
    return fd;
}

int net_accept(int lfd, char *err, size_t errlen)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0)
            return fd;
        int e = errno;
        if (e == EINTR || e == ECONNABORTED)
            continue;
        char eb[128];
        tr_say(err, errlen, "accept: %s", tr_errno_text(e, eb, sizeof eb));
        return -1;
    }
}

/* connect() was interrupted: the attempt goes on in the background, so wait
 * for it and fetch its outcome. Returns 0, or -1 with errno set. */
static int finish_connect(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int r;
    do
        r = poll(&p, 1, -1);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return -1;
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
        return -1;
    if (soerr != 0) {
        errno = soerr;
        return -1;
    }
    return 0;
}

static int connect_step(int fd, const struct addrinfo *ai, int backlog)
{
    (void)backlog;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
        (errno == EINTR && finish_connect(fd) == 0))
        return 0;
    return -1;
}

int net_connect(const char *hostport, char *err, size_t errlen)
{
    return open_first(hostport, false, connect_step, 0, "connect to", err, errlen);
}

int net_nodelay(int fd, char *err, size_t errlen)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
        char eb[128];
        tr_say(err, errlen, "setsockopt TCP_NODELAY: %s",
            tr_errno_text(errno, eb, sizeof eb));
        return -1;
    }
    return 0;
}

ssize_t net_read_ring(int fd, rb_ring *rb, char *err, size_t errlen)
{
    size_t room;
    uint8_t *w = rb_space(rb, &room);
    if (room == 0) {
        tr_say(err, errlen, "read buffer full (%zu bytes unread)", rb->len);
        return -1;
    }
    if (room > NET_READ_MAX)
        room = NET_READ_MAX;
    for (;;) {
        ssize_t n = read(fd, w, room);
        if (n > 0) {
            rb_commit(rb, (size_t)n);
            return n;
        }
        if (n == 0)
            return 0;
        int e = errno;
        if (e == EINTR)
            continue;
        if (e == EAGAIN || e == EWOULDBLOCK)
            return NET_AGAIN;
        char eb[128];
        tr_say(err, errlen, "read: %s", tr_errno_text(e, eb, sizeof eb));
        return -1;
    }
}

/* One gather write of at most IOV_MAX entries; -1 with errno on failure. */
static ssize_t gather_write(int fd, struct iovec *iov, size_t cnt, bool *sock)
{
    if (cnt > IOV_MAX)
        cnt = IOV_MAX;
    if (*sock) {
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_iov = iov;
        m.msg_iovlen = cnt;
        ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (n >= 0 || errno != ENOTSOCK)
            return n;
        *sock = false;
    }
    return writev(fd, iov, (int)cnt);
}

int net_writev_all(int fd, struct iovec *iov, size_t iovcnt, char *err,
                   size_t errlen)
{
    bool sock = true;
    char eb[128];
    for (;;) {
        /* Skip what is done (and empty entries). */
        while (iovcnt > 0 && iov->iov_len == 0) {
            iov++;
            iovcnt--;
        }
        if (iovcnt == 0)
            return 0;
        ssize_t n = gather_write(fd, iov, iovcnt, &sock);
        if (n < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            if (e == EAGAIN || e == EWOULDBLOCK) {
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                if (poll(&p, 1, -1) < 0 && errno != EINTR) {
                    e = errno;
                    tr_say(err, errlen, "write: poll: %s",
                        tr_errno_text(e, eb, sizeof eb));
                    return -1;
                }
                continue;
            }
            if (e == EPIPE || e == ECONNRESET)
                tr_say(err, errlen, "write: peer closed the connection (%s)",
                    tr_errno_text(e, eb, sizeof eb));
            else
                tr_say(err, errlen, "write: %s", tr_errno_text(e, eb, sizeof eb));
            return -1;
        }
        /* Partial write: advance past the n bytes that went out. */
        size_t left = (size_t)n;
        while (left > 0) {
            if (left >= iov->iov_len) {
                left -= iov->iov_len;
                iov->iov_len = 0;
                iov++;
                iovcnt--;
            } else {
                iov->iov_base = (uint8_t *)iov->iov_base + left;
                iov->iov_len -= left;
                left = 0;
            }
        }
    }
}

void net_sockaddr_name(const struct sockaddr_storage *ss, char *out, size_t len)
{
    char a[INET6_ADDRSTRLEN] = "?";
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof a);
        snprintf(out, len, "[%s]:%u", a, (unsigned)ntohs(s6->sin6_port));
    } else if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &s4->sin_addr, a, sizeof a);
        snprintf(out, len, "%s:%u", a, (unsigned)ntohs(s4->sin_port));
    } else {
        snprintf(out, len, "?:0");
    }
}

pid_t net_fork_tied(void)
{
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(1); /* it ended before the line above took hold */
    }
    return pid;
}
