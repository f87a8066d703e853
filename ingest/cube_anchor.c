/*
 * cube_anchor.c — anchor.xml of a Cube profile into a cube_anchor.
 *
 * Reads with expat the parts Extra-P uses: <metrics> (id, type, uniq_name,
 * dtype, nesting), <program> (regions' ids and names; the cnode tree with its
 * ids and callee regions) and <system> (the locations under the first
 * top-level system tree node). A DOCTYPE is refused outright, so no entity
 * is ever declared or expanded; element texts kept are bounded.
 */
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/cube_internal.h"

#define TEXT_MAX 65536

typedef enum el_kind {
    EL_OTHER = 0,
    EL_METRIC,
    EL_REGION,
    EL_CNODE,
    EL_STN,     /* systemtreenode */
    EL_TEXT,    /* an element whose text is kept */
} el_kind;

typedef struct frame {
    el_kind kind;
    int index; /* metric/region/cnode index, stn depth */
} frame;

typedef struct parse_state {
    XML_Parser p;
    cube_anchor *a;
    long max_nodes;
    long nodes;
    char *msg;
    size_t msgcap;
    int failed;
    frame *stack;
    int depth;
    size_t stack_cap;
    int in_metrics, in_program, in_system;
    int stn_top_seen; /* top-level system tree nodes opened */
    int stn_first_depth; /* >0 while inside the first top-level one */
    char **text_dst;  /* where the text of the open EL_TEXT goes */
    char *text;
    size_t text_len;
} parse_state;

static void fail(parse_state *s, const char *fmt, const char *arg)
{
    if (s->failed)
        return;
    s->failed = 1;
    char detail[200];
    snprintf(detail, sizeof detail, fmt, arg ? arg : "");
    snprintf(s->msg, s->msgcap, "line %lu: %s", (unsigned long)XML_GetCurrentLineNumber(s->p),
             detail);
    XML_StopParser(s->p, XML_FALSE);
}

static const char *attr(const XML_Char **atts, const char *name)
{
    for (int i = 0; atts[i]; i += 2)
        if (!strcmp(atts[i], name))
            return atts[i + 1];
    return NULL;
}

static int attr_long(parse_state *s, const XML_Char **atts, const char *name, long *out)
{
    const char *v = attr(atts, name);
    char *end = NULL;
    if (!v || !*v) {
        fail(s, "attribute %s is missing", name);
        return -1;
    }
    long x = strtol(v, &end, 10);
    if (*end || x < 0 || x > 2000000000L) {
        fail(s, "attribute %s is not an id >= 0", name);
        return -1;
    }
    *out = x;
    return 0;
}

static void *grow(parse_state *s, void *arr, size_t *cap, int n, size_t elem)
{
    if ((size_t)n < *cap)
        return arr;
    if (++s->nodes > s->max_nodes) {
        fail(s, "more than %s metrics, regions, cnodes and locations", "the limit of");
        return NULL;
    }
    size_t nc = *cap ? *cap * 2 : 16;
    void *p = realloc(arr, nc * elem);
    if (!p) {
        fail(s, "out of memory%s", NULL);
        return NULL;
    }
    *cap = nc;
    return p;
}

static int push(parse_state *s, el_kind k, int index)
{
    if ((size_t)s->depth >= s->stack_cap) {
        size_t nc = s->stack_cap ? s->stack_cap * 2 : 64;
        if (nc > 100000) {
            fail(s, "elements nested too deeply%s", NULL);
            return -1;
        }
        frame *f = realloc(s->stack, nc * sizeof *f);
        if (!f) {
            fail(s, "out of memory%s", NULL);
            return -1;
        }
        s->stack = f;
        s->stack_cap = nc;
    }
    s->stack[s->depth++] = (frame){k, index};
    return 0;
}

static frame *top(parse_state *s)
{
    return s->depth ? &s->stack[s->depth - 1] : NULL;
}

static void begin_text(parse_state *s, char **dst)
{
    if (*dst) {
        fail(s, "element repeated%s", NULL);
        return;
    }
    s->text_dst = dst;
    s->text_len = 0;
    push(s, EL_TEXT, 0);
}

static void start_metric(parse_state *s, const XML_Char **atts)
{
    cube_anchor *a = s->a;
    frame *f = top(s);
    long id;
    if (attr_long(s, atts, "id", &id))
        return;
    const char *type = attr(atts, "type");
    if (!type || (strcmp(type, "INCLUSIVE") && strcmp(type, "EXCLUSIVE"))) {
        fail(s, "metric type must be INCLUSIVE or EXCLUSIVE, not \"%.40s\"", type ? type : "");
        return;
    }
    cube_metric_decl *m = grow(s, a->metrics, &a->metrics_cap, a->nmetrics, sizeof *m);
    if (!m)
        return;
    a->metrics = m;
    a->metrics[a->nmetrics] =
        (cube_metric_decl){id, type[0] == 'I', !(f && f->kind == EL_METRIC), NULL, NULL};
    push(s, EL_METRIC, a->nmetrics++);
}

static void start_region(parse_state *s, const XML_Char **atts)
{
    cube_anchor *a = s->a;
    long id;
    if (attr_long(s, atts, "id", &id))
        return;
    cube_region *r = grow(s, a->regions, &a->regions_cap, a->nregions, sizeof *r);
    if (!r)
        return;
    a->regions = r;
    a->regions[a->nregions] = (cube_region){id, NULL};
    push(s, EL_REGION, a->nregions++);
}

static void start_cnode(parse_state *s, const XML_Char **atts)
{
    cube_anchor *a = s->a;
    frame *f = top(s);
    long id, callee;
    if (attr_long(s, atts, "id", &id) || attr_long(s, atts, "calleeId", &callee))
        return;
    cube_cnode *c = grow(s, a->cnodes, &a->cnodes_cap, a->ncnodes, sizeof *c);
    if (!c)
        return;
    a->cnodes = c;
    int me = a->ncnodes++;
    int parent = f && f->kind == EL_CNODE ? f->index : -1;
    a->cnodes[me] = (cube_cnode){id, callee, -1, parent, -1, -1, -1, -1};
    if (parent >= 0) {
        /* append to the parent's children, keeping document order */
        cube_cnode *pc = &a->cnodes[parent];
        if (pc->last_child >= 0)
            a->cnodes[pc->last_child].next_sibling = me;
        else
            pc->first_child = me;
        pc->last_child = me;
    }
    push(s, EL_CNODE, me);
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    parse_state *s = ud;
    if (s->failed)
        return;
    frame *f = top(s);
    if (f && f->kind == EL_TEXT) {
        fail(s, "<%.40s> inside a text element", name);
        return;
    }
    if (!strcmp(name, "metrics"))
        s->in_metrics++;
    else if (!strcmp(name, "program"))
        s->in_program++;
    else if (!strcmp(name, "system"))
        s->in_system++;
    if (s->in_metrics && !strcmp(name, "metric")) {
        start_metric(s, atts);
    } else if (f && f->kind == EL_METRIC && !strcmp(name, "uniq_name")) {
        begin_text(s, &s->a->metrics[f->index].name);
    } else if (f && f->kind == EL_METRIC && !strcmp(name, "dtype")) {
        begin_text(s, &s->a->metrics[f->index].dtype);
    } else if (s->in_program && !strcmp(name, "region")) {
        start_region(s, atts);
    } else if (f && f->kind == EL_REGION && !strcmp(name, "name")) {
        begin_text(s, &s->a->regions[f->index].name);
    } else if (s->in_program && !strcmp(name, "cnode")) {
        start_cnode(s, atts);
    } else if (s->in_system && !strcmp(name, "systemtreenode")) {
        int nested = f && f->kind == EL_STN;
        if (!nested)
            s->stn_top_seen++;
        push(s, EL_STN, 0);
    } else if (s->in_system && !strcmp(name, "location")) {
        /* inside the first top-level system tree node only (pycubexr) */
        int in_first = 0;
        for (int i = 0; i < s->depth; i++)
            if (s->stack[i].kind == EL_STN)
                in_first = s->stn_top_seen == 1;
        if (in_first) {
            if (++s->nodes > s->max_nodes) {
                fail(s, "more than the limit of %s locations", "allowed");
                return;
            }
            s->a->nlocations++;
        }
        push(s, EL_OTHER, 0);
    } else {
        push(s, EL_OTHER, 0);
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    parse_state *s = ud;
    if (s->failed || !s->depth)
        return;
    frame f = s->stack[--s->depth];
    if (f.kind == EL_TEXT) {
        char *t = malloc(s->text_len + 1);
        if (!t) {
            fail(s, "out of memory%s", NULL);
            return;
        }
        /* trimmed, like the types and names Extra-P compares */
        size_t b = 0, e = s->text_len;
        while (b < e && (s->text[b] == ' ' || s->text[b] == '\n' || s->text[b] == '\t' ||
                         s->text[b] == '\r'))
            b++;
        while (e > b && (s->text[e - 1] == ' ' || s->text[e - 1] == '\n' ||
                         s->text[e - 1] == '\t' || s->text[e - 1] == '\r'))
            e--;
        memcpy(t, s->text + b, e - b);
        t[e - b] = '\0';
        *s->text_dst = t;
        s->text_dst = NULL;
    }
    if (!strcmp(name, "metrics"))
        s->in_metrics--;
    else if (!strcmp(name, "program"))
        s->in_program--;
    else if (!strcmp(name, "system"))
        s->in_system--;
}

static void XMLCALL on_text(void *ud, const XML_Char *txt, int len)
{
    parse_state *s = ud;
    frame *f = top(s);
    if (s->failed || !f || f->kind != EL_TEXT)
        return;
    if (s->text_len + (size_t)len > TEXT_MAX) {
        fail(s, "a name longer than %s bytes", "65536");
        return;
    }
    memcpy(s->text + s->text_len, txt, (size_t)len);
    s->text_len += (size_t)len;
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int internal)
{
    (void)name, (void)sysid, (void)pubid, (void)internal;
    fail(ud, "a DOCTYPE is not allowed (no entity declarations%s)", NULL);
}

static void XMLCALL on_entity(void *ud, const XML_Char *name, int pe, const XML_Char *v, int vl,
                              const XML_Char *base, const XML_Char *sys, const XML_Char *pub,
                              const XML_Char *notation)
{
    (void)name, (void)pe, (void)v, (void)vl, (void)base, (void)sys, (void)pub, (void)notation;
    fail(ud, "entity declarations are not allowed%s", NULL);
}

static int region_cmp(const void *x, const void *y, void *ctx)
{
    const cube_region *r = ctx;
    long a = r[*(const int *)x].id, b = r[*(const int *)y].id;
    return (a > b) - (a < b);
}

/* Regions by id into each cnode; ids must be distinct and known. */
static int resolve(cube_anchor *a, char *msg, size_t msgcap)
{
    for (int i = 0; i < a->nregions; i++)
        if (!a->regions[i].name) {
            snprintf(msg, msgcap, "region %ld has no <name>", a->regions[i].id);
            return -1;
        }
    for (int i = 0; i < a->nmetrics; i++)
        if (!a->metrics[i].name || !a->metrics[i].dtype) {
            snprintf(msg, msgcap, "metric %ld lacks <uniq_name> or <dtype>", a->metrics[i].id);
            return -1;
        }
    /* regions are usually numbered 0..n-1 in order: index directly, else
     * search the regions sorted by id */
    int *byid = malloc(sizeof(int) * (size_t)(a->nregions ? a->nregions : 1));
    if (!byid) {
        snprintf(msg, msgcap, "out of memory");
        return -1;
    }
    for (int i = 0; i < a->nregions; i++)
        byid[i] = i;
    qsort_r(byid, (size_t)a->nregions, sizeof *byid, region_cmp, a->regions);
    for (int i = 0; i < a->ncnodes; i++) {
        long rid = a->cnodes[i].region_id;
        int r = rid < a->nregions && a->regions[rid].id == rid ? (int)rid : -1;
        for (int lo = 0, hi = a->nregions - 1; r < 0 && lo <= hi;) {
            int mid = lo + (hi - lo) / 2;
            long v = a->regions[byid[mid]].id;
            if (v == rid)
                r = byid[mid];
            else if (v < rid)
                lo = mid + 1;
            else
                hi = mid - 1;
        }
        if (r < 0) {
            free(byid);
            snprintf(msg, msgcap, "cnode %ld calls region %ld, which is not declared",
                     a->cnodes[i].id, rid);
            return -1;
        }
        a->cnodes[i].region = r;
    }
    free(byid);
    if (a->ncnodes == 0) {
        snprintf(msg, msgcap, "the call tree is empty");
        return -1;
    }
    if (a->nlocations == 0) {
        snprintf(msg, msgcap, "the system tree has no location");
        return -1;
    }
    return 0;
}

int cube_anchor_parse(const char *xml, size_t len, long max_nodes, cube_anchor *a, char *msg,
                      size_t msgcap)
{
    memset(a, 0, sizeof *a);
    parse_state s = {.a = a, .max_nodes = max_nodes, .msg = msg, .msgcap = msgcap};
    s.text = malloc(TEXT_MAX);
    s.p = XML_ParserCreate(NULL);
    if (!s.p || !s.text) {
        snprintf(msg, msgcap, "out of memory");
        free(s.text);
        if (s.p)
            XML_ParserFree(s.p);
        return -1;
    }
    XML_SetUserData(s.p, &s);
    XML_SetElementHandler(s.p, on_start, on_end);
    XML_SetCharacterDataHandler(s.p, on_text);
    XML_SetStartDoctypeDeclHandler(s.p, on_doctype);
    XML_SetEntityDeclHandler(s.p, on_entity);
    XML_SetParamEntityParsing(s.p, XML_PARAM_ENTITY_PARSING_NEVER);
    int rc = 0;
    /* expat takes int lengths: feed in chunks */
    size_t off = 0;
    do {
        size_t n = len - off > (1u << 30) ? (1u << 30) : len - off;
        int final = off + n == len;
        if (XML_Parse(s.p, xml + off, (int)n, final) == XML_STATUS_ERROR) {
            if (!s.failed)
                snprintf(msg, msgcap, "line %lu: %s", (unsigned long)XML_GetCurrentLineNumber(s.p),
                         XML_ErrorString(XML_GetErrorCode(s.p)));
            rc = -1;
            break;
        }
        off += n;
    } while (off < len);
    if (!rc && s.failed)
        rc = -1;
    if (!rc)
        rc = resolve(a, msg, msgcap);
    XML_ParserFree(s.p);
    free(s.stack);
    free(s.text);
    if (rc)
        cube_anchor_free(a);
    return rc;
}

void cube_anchor_free(cube_anchor *a)
{
    for (int i = 0; i < a->nmetrics; i++) {
        free(a->metrics[i].name);
        free(a->metrics[i].dtype);
    }
    for (int i = 0; i < a->nregions; i++)
        free(a->regions[i].name);
    free(a->metrics);
    free(a->regions);
    free(a->cnodes);
    memset(a, 0, sizeof *a);
}

int cube_wide_order(const cube_anchor *a, int *out)
{
    int *stack = malloc(sizeof(int) * (size_t)(a->ncnodes ? a->ncnodes : 1));
    if (!stack)
        return -1;
    int k = 0;
    for (int root = 0; root < a->ncnodes; root++) {
        if (a->cnodes[root].parent >= 0)
            continue;
        out[k++] = root;
        int sp = 0;
        stack[sp++] = root;
        while (sp) {
            int n = stack[--sp];
            int nchild = 0;
            for (int c = a->cnodes[n].first_child; c >= 0; c = a->cnodes[c].next_sibling) {
                out[k++] = c;
                nchild++;
            }
            /* children pushed in reverse so the first is visited next */
            int base = sp;
            for (int c = a->cnodes[n].first_child; c >= 0; c = a->cnodes[c].next_sibling)
                stack[sp++] = c;
            for (int i = 0; i < nchild / 2; i++) {
                int t = stack[base + i];
                stack[base + i] = stack[sp - 1 - i];
                stack[sp - 1 - i] = t;
            }
        }
    }
    free(stack);
    return 0;
}
