/* htab.c - the string-keyed hash table of the load server's caches. */
#include "loader.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void *sld_htab_get(const struct sld_htab *t, const char *key)
{
    if (!t->nb)
        return NULL;
    uint64_t h = hash(key);
    for (struct sld_hent *e = t->b[h % t->nb]; e; e = e->next)
        if (e->h == h && !strcmp(e->key, key))
            return e->val;
    return NULL;
}

static int grow(struct sld_htab *t)
{
    size_t nb = t->nb ? t->nb * 2 : 256;
    struct sld_hent **b = calloc(nb, sizeof *b);
    if (!b)
        return -1;
    for (size_t i = 0; i < t->nb; i++) {
        for (struct sld_hent *e = t->b[i], *n; e; e = n) {
            n = e->next;
            e->next = b[e->h % nb];
            b[e->h % nb] = e;
        }
    }
    free(t->b);
    t->b = b;
    t->nb = nb;
    return 0;
}

int sld_htab_put(struct sld_htab *t, const char *key, void *val)
{
    if (t->n >= t->nb && grow(t))
        return -1;
    struct sld_hent *e = malloc(sizeof *e);
    char *k = strdup(key);
    if (!e || !k) {
        free(e);
        free(k);
        return -1;
    }
    e->h = hash(key);
    e->key = k;
    e->val = val;
    e->next = t->b[e->h % t->nb];
    t->b[e->h % t->nb] = e;
    t->n++;
    return 0;
}

void sld_htab_free(struct sld_htab *t, void (*freeval)(void *))
{
    for (size_t i = 0; i < t->nb; i++) {
        for (struct sld_hent *e = t->b[i], *n; e; e = n) {
            n = e->next;
            if (freeval)
                freeval(e->val);
            free(e->key);
            free(e);
        }
    }
    free(t->b);
    memset(t, 0, sizeof *t);
}
