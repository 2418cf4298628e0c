/*
 * serve_guard.c - who may talk to `traceconv serve`, and for how long.
 *
 * Host and Origin (DNS rebinding, cross-site requests): a web page the user
 * visits can make the browser send requests to 127.0.0.1:8080, and a name of
 * the attacker's that resolves to 127.0.0.1 makes it same-origin for the
 * browser. So every request must name this server in its Host header (the
 * listening address, "localhost" when it is a loopback one, any local address
 * when it is a wildcard, and the names given with --allow-host), with the
 * listening port; and a request that carries an Origin (every browser POST
 * and cross-origin fetch does) must come from a page of that same origin.
 * "Origin: null" (sandboxed frames, file: pages, redirects) is refused. A request with
 * two Host or two Origin headers (in any case) is refused (400): libmicrohttpd's lookup
 * gives the first, and a proxy or another reader could take the other.
 *
 * Slow clients (slowloris): the request line and headers must arrive within
 * --header-timeout seconds (10) of the connection's start or of the end of the
 * previous request on it; a body must average --min-rate bytes a second (16K)
 * from the end of its headers, once that time has passed. Past either the
 * connection is closed at once: libmicrohttpd offers no way to queue an answer
 * before the headers are complete, nor while it hands the handler upload data.
 * An answer must be read at that same rate: from the moment it is queued, once
 * --header-timeout has passed, the bytes of it the client has taken (what serve
 * handed libmicrohttpd, less what the kernel still holds unacknowledged:
 * tci_socket_unsent) must average --min-rate, else the connection is reset
 * (SO_LINGER 0: the kernel drops what it holds for it). Otherwise a client that
 * reads a large download one byte a second held its connection until
 * libmicrohttpd's 60 s idle timeout, which each byte read pushed back, and 64
 * of them held every connection of an address. The main thread sweeps every
 * second (srv_guard_sweep).
 *
 * Connection limits that one client cannot exhaust: at most 256 connections,
 * 64 from one address. At either limit a new connection takes the place of
 * the oldest one that is still waiting for its headers (a slow one, or an idle
 * keep-alive connection, which browsers reopen by themselves); only when none
 * is waiting is the new one refused. So 64 slow connections from 127.0.0.1 do
 * not lock out the other local clients, whose headers come at once.
 *
 * Threads: libmicrohttpd's event thread calls the accept policy, the
 * connection notifications and the request hooks; the main thread sweeps. One
 * mutex guards the table. A connection is closed with shutdown() under that
 * mutex: libmicrohttpd tells us a connection is closed (and we forget it)
 * before it closes the socket, so the descriptor we shut down is always the
 * connection's own, never a reused number.
 */
#include "serve.h"
#include "../util/tc_compat.h" /* compiled in (CMakeLists.txt) */

#include <microhttpd.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { G_HEADERS, G_BODY, G_OTHER, G_ANSWER }; /* what the connection is waiting for (G_ANSWER: its
                                                  answer to be read) */
enum { MAX_NAMES = 32, MAX_ADDRS = 64 };

typedef struct gconn {
    struct gconn *prev, *next;
    struct srv_guard *g;
    int fd;
    int family;
    unsigned char addr[16]; /* the client's address (port left out) */
    int phase;
    double since;           /* when the phase began */
    uint64_t body;          /* G_BODY: bytes received; G_ANSWER: bytes of the answer handed to libmicrohttpd */
    int closing;            /* shut down by the guard */
} gconn;

typedef struct gaddr {
    int family;
    unsigned char addr[16];
} gaddr;

struct srv_guard {
    srv_guard_conf conf;
    pthread_mutex_t lock;
    gconn *head;            /* oldest first */
    unsigned n;
    unsigned port;          /* the listening port */
    char listen_text[320];  /* "127.0.0.1:8080" for messages */
    char names[MAX_NAMES][256];            /* lower case, without a trailing dot */
    size_t n_names;
    gaddr addrs[MAX_ADDRS];
    size_t n_addrs;
    int loopback;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void address_of(const struct sockaddr *sa, int *family, unsigned char out[16])
{
    memset(out, 0, 16);
    *family = sa ? sa->sa_family : AF_UNSPEC;
    if (*family == AF_INET)
        memcpy(out, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    else if (*family == AF_INET6)
        memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

srv_guard *srv_guard_new(const srv_guard_conf *conf)
{
    srv_guard *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->conf = *conf;
    pthread_mutex_init(&g->lock, NULL);
    return g;
}

void srv_guard_free(srv_guard *g)
{
    if (!g)
        return;
    while (g->head) {
        gconn *c = g->head;
        g->head = c->next;
        free(c);
    }
    pthread_mutex_destroy(&g->lock);
    free(g);
}

/* ---- Host and Origin ---------------------------------------------------------- */

static void add_name(srv_guard *g, const char *name)
{
    if (g->n_names == MAX_NAMES || strlen(name) >= sizeof g->names[0])
        return;
    char *o = g->names[g->n_names++];
    size_t n = 0;
    for (; name[n]; n++)
        o[n] = (char)tolower((unsigned char)name[n]);
    if (n && o[n - 1] == '.')
        n--;
    o[n] = 0;
}

static void add_addr(srv_guard *g, const struct sockaddr *sa)
{
    if (g->n_addrs == MAX_ADDRS || !sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
        return;
    gaddr *a = &g->addrs[g->n_addrs++];
    address_of(sa, &a->family, a->addr);
}

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return 1;
        return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
    }
    return 0;
}

static int is_wildcard(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return 0;
}

int srv_guard_listen(srv_guard *g, const struct sockaddr *sa, const char *text, const char *const *names,
                     size_t n_names)
{
    g->port = ntohs(sa->sa_family == AF_INET6 ? ((const struct sockaddr_in6 *)sa)->sin6_port
                                               : ((const struct sockaddr_in *)sa)->sin_port);
    snprintf(g->listen_text, sizeof g->listen_text, "%s", text);
    g->loopback = is_loopback(sa);
    add_addr(g, sa);
    if (g->loopback)
        add_name(g, "localhost");
    if (is_wildcard(sa)) { /* every address of the machine, its name, and loopback */
        struct ifaddrs *ifs = NULL;
        if (getifaddrs(&ifs) == 0) {
            for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
                add_addr(g, i->ifa_addr);
            freeifaddrs(ifs);
        }
        char host[256];
        if (gethostname(host, sizeof host) == 0) {
            host[sizeof host - 1] = 0;
            add_name(g, host);
        }
        add_name(g, "localhost");
    }
    for (size_t i = 0; i < n_names; i++)
        add_name(g, names[i]);
    return g->loopback;
}

/* "host", "host:port", "[v6]" or "[v6]:port" (port 80 when absent): 0 when it names this server. */
static int names_us(const srv_guard *g, const char *s, size_t len)
{
    char host[256];
    const char *port = NULL;
    size_t hlen;
    if (len && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close)
            return -1;
        hlen = (size_t)(close - s - 1);
        if (hlen >= sizeof host)
            return -1;
        memcpy(host, s + 1, hlen);
        if ((size_t)(close + 1 - s) < len) {
            if (close[1] != ':')
                return -1;
            port = close + 2;
        }
    } else {
        const char *colon = memchr(s, ':', len);
        hlen = colon ? (size_t)(colon - s) : len;
        if (hlen >= sizeof host || (colon && memchr(colon + 1, ':', len - hlen - 1)))
            return -1;
        memcpy(host, s, hlen);
        if (colon)
            port = colon + 1;
    }
    host[hlen] = 0;
    unsigned long p = 80;
    if (port) {
        size_t plen = len - (size_t)(port - s);
        if (!plen || plen > 5)
            return -1;
        p = 0;
        for (size_t i = 0; i < plen; i++) {
            if (!isdigit((unsigned char)port[i]))
                return -1;
            p = p * 10 + (unsigned long)(port[i] - '0');
        }
    }
    if (p != g->port || !hlen)
        return -1;
    unsigned char bin[16];
    int family = 0;
    memset(bin, 0, sizeof bin);
    if (s[0] == '[' ? inet_pton(AF_INET6, host, bin) == 1 && (family = AF_INET6)
                    : inet_pton(AF_INET, host, bin) == 1 && (family = AF_INET)) {
        for (size_t i = 0; i < g->n_addrs; i++)
            if (g->addrs[i].family == family && !memcmp(g->addrs[i].addr, bin, 16))
                return 0;
        return -1;
    }
    if (s[0] == '[')
        return -1;
    for (size_t i = 0; host[i]; i++)
        host[i] = (char)tolower((unsigned char)host[i]);
    if (hlen && host[hlen - 1] == '.')
        host[hlen - 1] = 0;
    for (size_t i = 0; i < g->n_names; i++)
        if (!strcmp(g->names[i], host))
            return 0;
    return -1;
}

/* A header value in a message: at most 100 bytes, printable ASCII only. */
static void quote_value(const char *v, char *out, size_t len)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)v; *p && o + 4 < len && o < 100; p++)
        out[o++] = *p >= 0x20 && *p < 0x7f ? (char)*p : '?';
    out[o] = 0;
}

int srv_guard_check_request(const srv_guard *g, const srv_origin *who, char *why, size_t len)
{
    char q[128];
    const char *host = who->host, *origin = who->origin;
    if (who->n_host > 1 || who->n_origin > 1) {
        snprintf(why, len, "refused: the request has %u Host and %u Origin headers: one of each at most", who->n_host,
                 who->n_origin);
        return 400;
    }
    if (!host || !*host) {
        snprintf(why, len, "refused: the request has no Host header (this server is %s)", g->listen_text);
        return 400;
    }
    if (names_us(g, host, strlen(host)) != 0) {
        quote_value(host, q, sizeof q);
        snprintf(why, len,
                 "refused: Host '%s' is not this server's address (%s): a page of another site cannot reach it "
                 "through a name of its own (DNS rebinding); --allow-host NAME allows a name",
                 q, g->listen_text);
        return 403;
    }
    if (!origin)
        return 0; /* curl, scripts, a browser's own navigation: no Origin */
    if (strncasecmp(origin, "http://", 7) || strpbrk(origin + 7, "/?#@") || names_us(g, origin + 7, strlen(origin + 7))) {
        quote_value(origin, q, sizeof q);
        snprintf(why, len,
                 "refused: a cross-origin request (Origin '%s'): only this server's own page (http://%s) may send it",
                 q, g->listen_text);
        return 403;
    }
    return 0;
}

/* ---- connections --------------------------------------------------------------- */

static void unlink_conn(srv_guard *g, gconn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        g->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    g->n--;
}

/* Closed at once (locked): libmicrohttpd sees the end of the stream and cleans it up. A slow
 * reader's connection is reset when libmicrohttpd closes it, so that the answer the kernel
 * still holds for it is dropped rather than kept trickling out. */
static void close_conn(gconn *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    if (c->phase == G_ANSWER) {
        struct linger l = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    shutdown(c->fd, SHUT_RDWR);
}

static unsigned live_count(const srv_guard *g, const int *family, const unsigned char *addr)
{
    unsigned n = 0;
    for (const gconn *c = g->head; c; c = c->next)
        if (!c->closing && (!family || (c->family == *family && !memcmp(c->addr, addr, 16))))
            n++;
    return n;
}

/* The oldest connection still waiting for its headers (of that address, or any): it makes room. */
static gconn *oldest_waiting(srv_guard *g, const int *family, const unsigned char *addr)
{
    gconn *best = NULL;
    for (gconn *c = g->head; c; c = c->next)
        if (!c->closing && c->phase == G_HEADERS && (!family || (c->family == *family && !memcmp(c->addr, addr, 16))) &&
            (!best || c->since < best->since))
            best = c;
    return best;
}

int srv_guard_accept(void *cls, const struct sockaddr *sa, unsigned len)
{
    (void)len;
    srv_guard *g = cls;
    int family;
    unsigned char addr[16];
    address_of(sa, &family, addr);
    int ok = 1;
    pthread_mutex_lock(&g->lock);
    if (live_count(g, &family, addr) >= g->conf.max_per_addr) {
        gconn *victim = oldest_waiting(g, &family, addr);
        if (victim)
            close_conn(victim);
        else
            ok = 0;
    }
    if (ok && live_count(g, NULL, NULL) >= g->conf.max_conns) {
        gconn *victim = oldest_waiting(g, NULL, NULL);
        if (victim)
            close_conn(victim);
        else
            ok = 0;
    }
    pthread_mutex_unlock(&g->lock);
    return ok;
}

void srv_guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context, int started)
{
    srv_guard *g = cls;
    if (!started) {
        gconn *c = *socket_context;
        if (!c)
            return;
        pthread_mutex_lock(&g->lock);
        unlink_conn(g, c);
        pthread_mutex_unlock(&g->lock);
        free(c);
        *socket_context = NULL;
        return;
    }
    gconn *c = calloc(1, sizeof *c);
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!c || !fd) {
        free(c);
        return; /* not tracked: libmicrohttpd's own timeout still applies */
    }
    c->fd = fd->connect_fd;
    c->g = g;
    address_of(ad ? ad->client_addr : NULL, &c->family, c->addr);
    c->phase = G_HEADERS;
    c->since = now_s();
    pthread_mutex_lock(&g->lock);
    c->next = NULL;
    c->prev = NULL;
    if (g->head) { /* appended: the list stays oldest first */
        gconn *t = g->head;
        while (t->next)
            t = t->next;
        t->next = c;
        c->prev = t;
    } else {
        g->head = c;
    }
    g->n++;
    pthread_mutex_unlock(&g->lock);
    *socket_context = c;
}

static gconn *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i ? i->socket_context : NULL;
}

static void set_phase(srv_guard *g, struct MHD_Connection *conn, int phase)
{
    gconn *c = conn_of(conn);
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    c->phase = phase;
    c->since = now_s();
    c->body = 0;
    pthread_mutex_unlock(&g->lock);
}

void srv_guard_request(srv_guard *g, struct MHD_Connection *conn, int body)
{
    set_phase(g, conn, body ? G_BODY : G_OTHER);
}

void srv_guard_body(srv_guard *g, struct MHD_Connection *conn, size_t n)
{
    gconn *c = conn_of(conn);
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    c->body += n;
    pthread_mutex_unlock(&g->lock);
}

void srv_guard_answer(struct MHD_Connection *conn)
{
    gconn *c = conn_of(conn);
    if (c)
        set_phase(c->g, conn, G_ANSWER);
}

void srv_guard_answer_bytes(struct MHD_Connection *conn, size_t n)
{
    gconn *c = conn_of(conn);
    if (!c)
        return;
    pthread_mutex_lock(&c->g->lock);
    c->body += n;
    pthread_mutex_unlock(&c->g->lock);
}

void srv_guard_body_done(srv_guard *g, struct MHD_Connection *conn)
{
    set_phase(g, conn, G_OTHER);
}

void srv_guard_request_done(srv_guard *g, struct MHD_Connection *conn)
{
    set_phase(g, conn, G_HEADERS); /* the next request's headers are waited for from now */
}

int srv_guard_fd(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    return fd ? fd->connect_fd : -1;
}

void srv_guard_sweep(srv_guard *g)
{
    double now = now_s(), limit = g->conf.header_timeout;
    pthread_mutex_lock(&g->lock);
    for (gconn *c = g->head; c; c = c->next) {
        double waited = now - c->since;
        if (c->phase == G_HEADERS && waited > limit)
            close_conn(c);
        else if (c->phase == G_BODY && waited > limit && (double)c->body < (double)g->conf.min_rate * waited)
            close_conn(c);
        else if (c->phase == G_ANSWER && waited > limit && !c->closing) {
            size_t held = tci_socket_unsent(c->fd);
            uint64_t taken = c->body > held ? c->body - held : 0;
            if ((double)taken < (double)g->conf.min_rate * waited)
                close_conn(c);
        }
    }
    pthread_mutex_unlock(&g->lock);
}

int srv_client_gone(int fd)
{
    if (fd < 0)
        return 0;
    struct pollfd p = {.fd = fd, .events = (short)(POLLIN | tci_poll_rdhup())};
    if (poll(&p, 1, 0) <= 0)
        return 0;
    if (p.revents & (POLLHUP | POLLERR | tci_poll_rdhup() | POLLNVAL))
        return 1;
    char c;
    ssize_t r = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return r == 0; /* a pipelined request waiting is not a goodbye */
}
