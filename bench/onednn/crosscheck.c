// crosscheck.c - oneDNN's side of gdnn's cross-check against oneDNN 2.x's reduction primitive
// (bench/onednn/crosscheck.sh builds it and bench/onednn/crosscheck, the Go side, drives it).
//
// It runs as a co-process: for each request on stdin it builds oneDNN's reduction for one
// benchdnn-style problem, stores the given logical src (and, for a sum post-op, the given
// logical dst) at the physical offsets oneDNN's own memory descriptors give for the tags
// (padding zero, as benchdnn's reorders leave it), executes the primitive, and answers with
// the physical buffers it used and the result read back logically. The Go side hands the
// same physical bytes with the same tags to gdnn, so both libraries see one logical tensor
// only if they agree on what the tags mean.
//
// Request:  one text line
//             ALG P EPS SDT DDT STAG DTAG SRC:DST SUM
//           (SUM is "-" or SCALE:ZP; tags as benchdnn spells them, x = the spatial dims),
//           then the logical src, dense row-major, in SDT's bytes, then, with a sum, the
//           logical dst before the run in DDT's bytes.
// Answer:   "OK IMPL SRCBYTES DSTBYTES\n", then SRCBYTES bytes of physical src, DSTBYTES
//           bytes of physical dst before the run, then the logical dst after the run,
//           dense row-major in DDT's bytes; or "NO REASON\n" where oneDNN refuses the
//           problem (unknown tag, unimplemented), with no data.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "onednn_tags.h"

static int parse_dt(const char *s, dnnl_data_type_t *dt) {
    static const struct { const char *n; dnnl_data_type_t dt; } t[] = {
        {"f32", dnnl_f32}, {"bf16", dnnl_bf16}, {"f16", dnnl_f16}, {"s8", dnnl_s8}, {"u8", dnnl_u8}, {"s32", dnnl_s32}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(s, t[i].n)) { *dt = t[i].dt; return 0; }
    return -1;
}


// find_tag expands benchdnn's x for rank nd ("abx" is plain) and looks the name up.
static int find_tag(const char *t, int nd, dnnl_format_tag_t *tag) {
    static const dnnl_format_tag_t plain[] = {dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
    if (!strcmp(t, "abx")) { *tag = plain[nd - 1]; return 0; }
    char buf[64];
    size_t o = 0;
    for (const char *c = t; *c && o < sizeof buf - 8; c++) {
        if (*c == 'x') { for (int k = 2; k < nd; k++) buf[o++] = 'a' + k; }
        else buf[o++] = *c;
    }
    buf[o] = 0;
    for (size_t k = 0; k < sizeof tag_table / sizeof tag_table[0]; k++)
        if (!strcmp(buf, tag_table[k].name)) { *tag = tag_table[k].tag; return 0; }
    return -1;
}

// phys_off is oneDNN's offset of a logical index in a blocked memory descriptor (off_v).
static size_t phys_off(const dnnl_memory_desc_t *md, const dnnl_dims_t idx) {
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    dnnl_dims_t pos;
    memcpy(pos, idx, sizeof pos);
    int64_t off = md->offset0, stride = 1;
    for (int k = b->inner_nblks - 1; k >= 0; k--) {
        int d = (int)b->inner_idxs[k];
        off += (pos[d] % b->inner_blks[k]) * stride;
        pos[d] /= b->inner_blks[k];
        stride *= b->inner_blks[k];
    }
    for (int d = 0; d < md->ndims; d++) off += pos[d] * b->strides[d];
    return (size_t)off;
}

// copy_logical moves every logical element between a dense row-major buffer and the memory
// of md: to_phys copies dense -> phys, else phys -> dense.
static void copy_logical(const dnnl_memory_desc_t *md, size_t es, char *dense, char *phys, int to_phys) {
    int nd = md->ndims;
    dnnl_dims_t idx = {0};
    size_t n = 1;
    for (int d = 0; d < nd; d++) n *= (size_t)md->dims[d];
    for (size_t i = 0; i < n; i++) {
        size_t o = phys_off(md, idx) * es;
        if (to_phys) memcpy(phys + o, dense + i * es, es);
        else memcpy(dense + i * es, phys + o, es);
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < md->dims[d]) break;
            idx[d] = 0;
        }
    }
}

static void read_exact(void *p, size_t n) {
    if (n && fread(p, 1, n, stdin) != n) { fprintf(stderr, "crosscheck: short read\n"); exit(2); }
}

static dnnl_engine_t eng;
static dnnl_stream_t strm;

// run answers one request; it returns after printing OK or NO.
static void run(char *line) {
    char alg_s[32], sdt_s[8], ddt_s[8], stag_s[40], dtag_s[40], prb[200], sum_s[64];
    float p, eps;
    if (sscanf(line, "%31s %f %f %7s %7s %39s %39s %199s %63s", alg_s, &p, &eps, sdt_s, ddt_s, stag_s, dtag_s, prb, sum_s) != 9) {
        fprintf(stderr, "crosscheck: bad request %s\n", line);
        exit(2);
    }
    dnnl_data_type_t sdt, ddt;
    dnnl_dims_t sd, dd;
    char *colon = strchr(prb, ':');
    if (parse_dt(sdt_s, &sdt) || parse_dt(ddt_s, &ddt) || !colon) { fprintf(stderr, "crosscheck: bad request %s\n", line); exit(2); }
    int nd = parse_dims(prb, colon, sd), ndd = parse_dims(colon + 1, prb + strlen(prb), dd);
    if (nd <= 0 || nd != ndd) { fprintf(stderr, "crosscheck: bad dims %s\n", prb); exit(2); }
    int has_sum = strcmp(sum_s, "-") != 0;
    float sum_scale = 1;
    int sum_zp = 0;
    if (has_sum) sscanf(sum_s, "%f:%d", &sum_scale, &sum_zp);
    size_t n_src = 1, n_dst = 1;
    for (int i = 0; i < nd; i++) { n_src *= (size_t)sd[i]; n_dst *= (size_t)dd[i]; }
    size_t ses = dt_size(sdt), des = dt_size(ddt);
    char *src_l = malloc(n_src * ses + 1), *dst_l = calloc(n_dst * des + 1, 1);
    read_exact(src_l, n_src * ses);
    if (has_sum) read_exact(dst_l, n_dst * des);

    dnnl_alg_kind_t alg = alg_of(alg_s);
    dnnl_format_tag_t stag, dtag;
    if (alg == dnnl_alg_kind_undef) { printf("NO unknown_alg\n"); goto out; }
    if (find_tag(stag_s, nd, &stag) || find_tag(dtag_s, nd, &dtag)) { printf("NO unknown_tag\n"); goto out; }

    dnnl_memory_desc_t src_md, dst_md;
    dnnl_status_t st;
    if ((st = dnnl_memory_desc_init_by_tag(&src_md, nd, sd, sdt, stag)) != dnnl_success ||
        (st = dnnl_memory_desc_init_by_tag(&dst_md, nd, dd, ddt, dtag)) != dnnl_success) {
        printf("NO md_%s\n", dnnl_status2str(st));
        goto out;
    }
    dnnl_reduction_desc_t rd;
    if ((st = dnnl_reduction_desc_init(&rd, alg, &src_md, &dst_md, p, eps)) != dnnl_success) {
        printf("NO desc_%s\n", dnnl_status2str(st));
        goto out;
    }
    dnnl_primitive_attr_t attr = NULL;
    if (has_sum) {
        dnnl_post_ops_t po;
        dnnl_primitive_attr_create(&attr);
        dnnl_post_ops_create(&po);
        dnnl_post_ops_append_sum_v3(po, sum_scale, sum_zp, dnnl_data_type_undef);
        dnnl_primitive_attr_set_post_ops(attr, po);
        dnnl_post_ops_destroy(po);
    }
    dnnl_primitive_desc_t pd;
    st = dnnl_primitive_desc_create(&pd, &rd, attr, eng, NULL);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) { printf("NO pd_%s\n", dnnl_status2str(st)); goto out; }
    const char *impl = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    char impl_s[128];
    snprintf(impl_s, sizeof impl_s, "%s", impl ? impl : "?");
    dnnl_primitive_t prim;
    if ((st = dnnl_primitive_create(&prim, pd)) != dnnl_success) { dnnl_primitive_desc_destroy(pd); printf("NO prim_%s\n", dnnl_status2str(st)); goto out; }
    dnnl_primitive_desc_destroy(pd);

    size_t sb = dnnl_memory_desc_get_size(&src_md), db = dnnl_memory_desc_get_size(&dst_md);
    char *src_p = calloc(sb + 1, 1), *dst_p = calloc(db + 1, 1), *dst0 = malloc(db + 1);
    copy_logical(&src_md, ses, src_l, src_p, 1);
    if (has_sum) copy_logical(&dst_md, des, dst_l, dst_p, 1);
    memcpy(dst0, dst_p, db);
    dnnl_memory_t sm, dm;
    dnnl_memory_create(&sm, &src_md, eng, src_p);
    dnnl_memory_create(&dm, &dst_md, eng, dst_p);
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, sm}, {DNNL_ARG_DST, dm}};
    if ((st = dnnl_primitive_execute(prim, strm, 2, args)) != dnnl_success || (st = dnnl_stream_wait(strm)) != dnnl_success) {
        printf("NO exec_%s\n", dnnl_status2str(st));
    } else {
        memset(dst_l, 0, n_dst * des);
        copy_logical(&dst_md, des, dst_l, dst_p, 0);
        printf("OK %s %zu %zu\n", impl_s, sb, db);
        fwrite(src_p, 1, sb, stdout);
        fwrite(dst0, 1, db, stdout);
        fwrite(dst_l, 1, n_dst * des, stdout);
    }
    dnnl_memory_destroy(sm);
    dnnl_memory_destroy(dm);
    dnnl_primitive_destroy(prim);
    free(src_p);
    free(dst_p);
    free(dst0);
out:
    fflush(stdout);
    free(src_l);
    free(dst_l);
}

int main(void) {
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success || dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) != dnnl_success) {
        fprintf(stderr, "crosscheck: no oneDNN CPU engine\n");
        return 2;
    }
    const dnnl_version_t *v = dnnl_version();
    printf("READY %d.%d.%d %s\n", v->major, v->minor, v->patch, dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()));
    fflush(stdout);
    char line[1024];
    while (fgets(line, sizeof line, stdin)) {
        if (line[0] == '\n') continue;
        run(line);
    }
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return 0;
}
