/* net.h - the overlay of load servers (src/loader, internal): links, the
 * authenticated handshake, the trees and the objects that travel on them.
 * doc/loader.md "Overlay" describes the design. */
#ifndef SHEAF_LOADER_NET_H
#define SHEAF_LOADER_NET_H

#include <stddef.h>
#include <stdint.h>

#include "netproto.h"

struct sld_server;

#define SLN_KEY 32
#define SLN_MAX_PENDING 64 /* connections in their handshake at once; more are refused */

struct sln_pend;
struct sld_htab;

#define SLN_MAX_PARKED 65536 /* children's GETs and preloads waiting for a parent at once */

/* a child's GET (l) or a preload (l NULL) waiting for an object from a parent */
struct sln_parked {
    struct sln_link *l;
    uint32_t kind;
    char *path;
};

/* one authenticated TCP connection to a peer (blocking, with timeouts) */
struct sln_link {
    int kind; /* 1 (the event loop tells links from clients, kind 0) */
    int fd;
    int dead;           /* a send failed: dropped by the event loop */
    uint32_t tree;      /* the tree the link belongs to */
    uint32_t rank;      /* the peer's rank (SLN_FRONTEND_RANK: the launcher) */
    int parent;         /* 1: the peer is our parent in `tree` */
    unsigned char *buf; /* the last frame received (grows up to SLN_FRAME_MAX) */
    size_t cap;
};

struct sld_net {
    int rank, size, roots, push, timeout_ms;
    unsigned char key[SLN_KEY];
    char **addrs;              /* "host:port" of every rank */
    int lfd;                   /* the TCP listener */
    struct sln_link **parents; /* [roots]: NULL for the trees this server roots */
    struct sln_link **peers;   /* children and the front end */
    int npeers, cappeers;
    uint32_t cur_kind; /* the GET being served (for ACK) */
    char cur_path[SLD_PATH_MAX];
    int cur_bcast;          /* it came by broadcast while it was served */
    int stop;               /* a SHUTDOWN came: stop after forwarding it */
    int use_fgfs;           /* classify paths with the global file status (default; 0: --copy-all) */
    void *fgfs, *fgfs_comm; /* policy.c: the ASYNC context and its collective layer */
    /* poorly distributed mount points: my group's representative reads them */
    int ngm;
    char **gmount;           /* mount point */
    int *grep;               /* the representative of my group for it */
    struct sln_link **glink; /* my link to that representative (made when first needed) */
    /* objects.c: GETs sent to the parents (key "kind:path" -> struct inflight),
   * how many are unanswered, when the last answer came; what waits for them */
    struct sld_htab *inflight;
    int outstanding;
    long last_progress;
    int progress; /* an object arrived: the parked requests are asked again */
    struct sln_parked *parked;
    size_t nparked, capparked;
    int ep; /* the server's event loop (links made later join it) */
    /* handshake.c: connections in their handshake, the refusal log's rate limit */
    struct sln_pend *pend[SLN_MAX_PENDING];
    int npend;
    long log_start;               /* the current window of the refusal log (ms, monotonic) */
    int log_lines;                /* lines logged in it */
    unsigned long log_suppressed; /* refusals not logged in it */
};

/* the "tree" of a link from a group member to its representative (mount index added) */
#define SLN_GROUP_TREE 0x40000000u

/* auth.c: the per-job secret and the handshake */
/* creates a new secret file (0600, O_EXCL|O_NOFOLLOW, 64 hex digits) */
int sln_secret_create(const char *path, char *err, size_t errlen);
/* reads a secret file: must be a regular file of ours, not readable by others */
int sln_secret_load(const char *path, unsigned char key[SLN_KEY], char *err, size_t errlen);
/* the connecting side: 0 when the peer proved the key, -1 otherwise */
int sln_auth_connect(int fd, const unsigned char key[SLN_KEY], uint32_t tree, uint32_t rank, int timeout_ms);
/* the accepting side, in steps (handshake.c runs them in the event loop):
 * the CHALLENGE answering a HELLO (fresh nonce, MAC); then whether a PROOF
 * fits that HELLO and CHALLENGE. 0, or -1 (refused) */
int sln_auth_challenge(const unsigned char key[SLN_KEY], const struct sln_hello *h, struct sln_challenge *c);
int sln_auth_check(const unsigned char key[SLN_KEY], const struct sln_hello *h, const struct sln_challenge *c,
                   const struct sln_proof *p);

/* link.c: frames and connections */
int sln_send_all(int fd, const void *buf, size_t n);
/* receives one frame into l->buf: 0 and *type, *len; -1 on error, timeout, EOF or bad frame */
int sln_recv_frame(struct sln_link *l, uint32_t *type, uint32_t *len);
int sln_recv_frame_fd(int fd, unsigned char *buf, size_t cap, uint32_t *type, uint32_t *len);
void sln_set_timeouts(int fd, int timeout_ms);
/* a TCP connection to "host:port" (retried until timeout_ms passes); fd or -1 */
int sln_dial(const char *addr, int timeout_ms);
/* a listener bound to "host:port"; fd or -1 with errno */
int sln_listen(const char *addr);
void sln_link_free(struct sln_link *l);

/* link.c: binomial trees; tree t is rooted at rank t and uses the ranks
 * relative to it. parent: -1 for the root. children: up to cap ranks. */
int sln_parent(int rank, int size, int tree);
int sln_children(int rank, int size, int tree, int *out, int cap);
/* the tree (and so the root) that owns a path: a hash range of paths */
int sln_tree_of(const char *path, int roots);

/* route.c: the overlay's helpers below the caches and the frames */
/* where the objects of a path come from, decided once per missed key (one
 * policy look-up, one tree hash) and handed to the GET and the push, which
 * decide nothing again: pass (the clients read the original), remote (ask
 * the parent: tree's, or the group's representative), or read here (push:
 * and broadcast it down the tree). No overlay: pass/remote/push 0. */
struct sln_where {
    int pass, remote, push;
    int tree;  /* the path's tree */
    int group; /* the poorly distributed mount point's index, else -1 */
};
void sln_where(const struct sld_net *n, const char *path, struct sln_where *w);
/* asks the parent for (kind, path) unless that GET is on its way already,
 * and never waits: 2 and s->wouldblock set (the caller's request is parked
 * and asked again when an object arrives; the reply is stored in the caches),
 * -1 when the link failed (the server then stops: its clients fall back) or
 * there is no memory. Never 0: the object is in the caches when it arrives. */
int sln_fetch(struct sld_server *s, uint32_t kind, const char *path, const struct sln_where *w);
/* a reply (OBJ or ACK) for (kind, path) came: 1 when it was asked for */
int sln_arrived(struct sld_net *n, uint32_t kind, const char *path);
void sln_free_inflight(struct sld_net *n);
/* ms until the parents must have answered something (-1: nothing asked);
 * past it the server is dead (s->dead) */
int sln_liveness(struct sld_server *s);
/* sends an object (FILE: its bytes from o->real, the local copy) on a link */
int sln_send_obj(struct sld_server *s, struct sln_link *l, const struct sln_obj *o);
/* sends a whole buffer on every child link of `tree` (a failed child is dropped) */
void sln_to_children(struct sld_net *n, uint32_t tree, const unsigned char *b, size_t len);
void sln_drop_link(struct sln_link *l);
/* push mode: an object this server just read from the file system goes to every child */
void sln_push(struct sld_server *s, const struct sln_obj *o, const struct sln_where *w);

/* objects.c: the frames that arrive on links (on top of the caches) */
/* the parked GETs and preloads asked again (after objects arrived) */
void sln_rerun(struct sld_server *s);
/* the parked entries of dead links dropped (before the links are freed) */
void sln_purge_parked(struct sld_net *n);
/* a frame arrived on a link in the event loop: -1 drops the link */
int sln_on_frame(struct sld_server *s, struct sln_link *l, uint32_t type, uint32_t len);

/* policy.c: the global file status over the overlay (tree 0) */
int sld_policy_init(struct sld_server *s); /* collective over every server; 0 or -1 */
/* 1: clients read it directly; 2: this server reads it itself, asking nobody (no
 * classification to go by, so it must not come from another node's copy) */
int sld_policy_pass(const struct sld_net *n, const char *path);
/* a poorly distributed path: the index of its mount point (its group's
 * representative reads it), else -1 */
int sld_policy_group(const struct sld_net *n, const char *path);
/* both in one call: SLD_POL_PASS (*group -1), SLD_POL_HERE (read here, *group -1),
 * else SLD_POL_OVERLAY and *group */
#define SLD_POL_OVERLAY 0
#define SLD_POL_PASS 1
#define SLD_POL_HERE 2
int sld_policy_of(const struct sld_net *n, const char *path, int *group);
void sld_policy_free(struct sld_net *n);

/* overlay.c: the server's side */
struct sheaf_loader_overlay;
struct sld_net *sld_net_create(const struct sheaf_loader_overlay *ov, char *err, size_t errlen);
void sld_net_free(struct sld_net *n);
/* the body of the thread that links to the parents (join it before using them) */
void *sld_net_connect_parents(void *arg);
int sld_net_complete(const struct sld_net *n);

/* handshake.c: the accepting side of the handshake in the event loop */
/* accepts every waiting connection into its handshake (at most SLN_MAX_PENDING) */
void sld_hs_accept(struct sld_server *s, int ep);
/* bytes on a pending connection: its link when the handshake and the checks passed */
struct sln_link *sld_hs_event(struct sld_server *s, int ep, struct sln_pend *p);
/* refuses the pending connections past their deadline, writes the refusal
 * log's summary when due; the ms until the next deadline, or -1 */
int sld_hs_tick(struct sld_server *s, int ep);
void sld_hs_free_all(struct sld_server *s, int ep);
/* a refusal: counted, logged at most 10 lines in 10 s, then how many were not */
void sld_net_refuse(struct sld_server *s, const char *who, const char *why);
void sld_net_log_flush(struct sld_server *s, int force);
/* an authenticated peer (fd blocking): it must be one of our children in the
 * tree it names (not yet connected) or the front end; its link, or NULL
 * (refused: fd closed, counted, logged) */
struct sln_link *sld_net_admit(struct sld_server *s, int fd, uint32_t tree, uint32_t rank, const char *who);
void sld_net_peer_name(int fd, char *out, size_t cap);

#endif
