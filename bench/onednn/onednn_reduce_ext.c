// onednn_reduce_ext.c - gdnn's copy of the anchors harness's onednn_reduce.c (../shared/anchors), extended
// for the reduction suite's other problems: s8/u8/s32 data (--sdt/--ddt), oneDNN format tags as benchdnn
// spells them (--stag/--dtag, x = the spatial dims; buffers sized with the tags' padding) and a sum post-op
// (--sum SCALE:ZP[:DT]). bench/kinds_side_by_side.sh builds and runs it; a problem oneDNN refuses prints
// impl=none status=unimplemented.
// onednn_reduce.c - oneDNN (C API, v2.x) reduction timing anchor (ReduceMean by default; --alg for the others).
//
// Usage:
//   onednn_reduce --sdt f32 --ddt f32 [--time S] [--min-iters N] [--max-iters N]
//                 [--warmup-time S] [--warmup-min N] [--no-check] [--label NAME]
//                 SRC:DST
//   SRC/DST are 'x'-separated dims, e.g. 6x12x10x24:6x12x1x1 (dst dim is 1
//   where the axis is reduced). Plain row-major tags (a, ab, abc, abcd, ...).
//
// Creates the reduction primitive (dnnl_reduction_mean) once, warms up, then
// times each execution separately (CLOCK_MONOTONIC around execute+wait) until
// both --time seconds and --min-iters executions are reached (or --max-iters).
// Prints one line of key=value pairs: impl string, threads, median/min us,
// effective GB/s ((src bytes + dst bytes) / time), max abs error vs a
// double-precision reference computed on the same (rounded) inputs.
//
// Threads: oneDNN here is built with the OpenMP runtime, so the thread count is
// OMP_NUM_THREADS (default: all cores).
#define _GNU_SOURCE
#include <errno.h>
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "onednn_tags.h"

#define CHECK(f)                                                              \
    do {                                                                      \
        dnnl_status_t s_ = (f);                                               \
        if (s_ != dnnl_success) {                                             \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #f, \
                    dnnl_status2str(s_));                                     \
            exit(2);                                                          \
        }                                                                     \
    } while (0)

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static dnnl_data_type_t parse_dt(const char *s) {
    if (!strcmp(s, "s8")) return dnnl_s8;
    if (!strcmp(s, "u8")) return dnnl_u8;
    if (!strcmp(s, "s32")) return dnnl_s32;
    if (!strcmp(s, "f32")) return dnnl_f32;
    if (!strcmp(s, "bf16")) return dnnl_bf16;
    if (!strcmp(s, "f16")) return dnnl_f16;
    fprintf(stderr, "unsupported data type '%s' (f32|bf16|f16|s8|u8|s32)\n", s);
    exit(1);
}


// tag_of expands benchdnn's x (the spatial dims) for rank nd and looks the
// name up in oneDNN's tag list; "" and abx mean plain.
static dnnl_format_tag_t tag_of(const char *t, int nd) {
    static const dnnl_format_tag_t plain[] = {dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
    if (!t || !*t || !strcmp(t, "abx")) return plain[nd - 1];
    if (!strcmp(t, "any")) return dnnl_format_tag_any;
    char buf[64]; size_t o = 0;
    for (const char *c = t; *c && o < sizeof buf - 8; c++) {
        if (*c == 'x') { for (int k = 2; k < nd; k++) buf[o++] = 'a' + k; }
        else buf[o++] = *c;
    }
    buf[o] = 0;
    for (size_t k = 0; k < sizeof tag_table / sizeof tag_table[0]; k++)
        if (!strcmp(buf, tag_table[k].name)) return tag_table[k].tag;
    fprintf(stderr, "unknown tag %s (%s)\n", t, buf);
    exit(1);
}

// float <-> bf16 (round to nearest even), float <-> f16 (F16C).
static uint16_t f2bf(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}
static float bf2f(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f2h(float f) { return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
static float h2f(uint16_t h) { return _cvtsh_ss(h); }

static float load_elem(const void *p, dnnl_data_type_t dt, size_t i) {
    switch (dt) {
        case dnnl_f32: return ((const float *)p)[i];
        case dnnl_bf16: return bf2f(((const uint16_t *)p)[i]);
        case dnnl_s8: return ((const int8_t *)p)[i];
        case dnnl_u8: return ((const uint8_t *)p)[i];
        case dnnl_s32: return (float)((const int32_t *)p)[i];
        default: return h2f(((const uint16_t *)p)[i]);
    }
}
static void store_elem(void *p, dnnl_data_type_t dt, size_t i, float v) {
    switch (dt) {
        case dnnl_f32: ((float *)p)[i] = v; break;
        case dnnl_bf16: ((uint16_t *)p)[i] = f2bf(v); break;
        case dnnl_s8: ((int8_t *)p)[i] = (int8_t)nearbyintf(fminf(fmaxf(v, -128), 127)); break;
        case dnnl_u8: ((uint8_t *)p)[i] = (uint8_t)nearbyintf(fminf(fmaxf(v, 0), 255)); break;
        case dnnl_s32: ((int32_t *)p)[i] = (int32_t)nearbyintf(v); break;
        default: ((uint16_t *)p)[i] = f2h(v); break;
    }
}

// 2 MiB-aligned, THP-advised allocation for large buffers (numpy does the
// same madvise for large arrays); 64-byte aligned otherwise.
static void *big_alloc(size_t bytes) {
    size_t align = bytes >= (2u << 20) ? (2u << 20) : 64;
    size_t sz = (bytes + align - 1) / align * align;
    void *p = NULL;
    if (posix_memalign(&p, align, sz)) {
        fprintf(stderr, "alloc %zu failed\n", bytes);
        exit(2);
    }
    if (align == (2u << 20)) madvise(p, sz, MADV_HUGEPAGE);
    return p;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float frand(void) {  // xorshift64*, uniform in [0.5, 1.5)
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    uint64_t r = rng_state * 0x2545F4914F6CDD1Dull;
    return 0.5f + (float)(r >> 40) * (1.0f / 16777216.0f);
}

int main(int argc, char **argv) {
    const char *sdt_s = "f32", *ddt_s = NULL, *prb = NULL, *label = "", *stag_s = "", *dtag_s = "";
    float sum_scale[4] = {0}; int sum_zp[4] = {0}, has_sum = 0;  // --sum may repeat (up to 4)
    char sum_dt_s[4][16] = {""};
    double time_budget = 1.0, warmup_time = 0.1;
    long min_iters = 10, max_iters = 200000, warmup_min = 2;
    int check = 1;
    const char *alg_s = "mean";
    float p_arg = 1.f, eps_arg = 0.f;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sdt") && i + 1 < argc) sdt_s = argv[++i];
        else if (!strcmp(argv[i], "--ddt") && i + 1 < argc) ddt_s = argv[++i];
        else if (!strcmp(argv[i], "--time") && i + 1 < argc) time_budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "--warmup-time") && i + 1 < argc) warmup_time = atof(argv[++i]);
        else if (!strcmp(argv[i], "--min-iters") && i + 1 < argc) min_iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--warmup-min") && i + 1 < argc) warmup_min = atol(argv[++i]);
        else if (!strcmp(argv[i], "--max-iters") && i + 1 < argc) max_iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--label") && i + 1 < argc) label = argv[++i];
        else if (!strcmp(argv[i], "--no-check")) check = 0;
        else if (!strcmp(argv[i], "--stag") && i + 1 < argc) stag_s = argv[++i];
        else if (!strcmp(argv[i], "--dtag") && i + 1 < argc) dtag_s = argv[++i];
        else if (!strcmp(argv[i], "--sum") && i + 1 < argc && has_sum < 4) {
            sscanf(argv[++i], "%f:%d:%15s", &sum_scale[has_sum], &sum_zp[has_sum], sum_dt_s[has_sum]);
            has_sum++;
        }
        else if (!strcmp(argv[i], "--alg") && i + 1 < argc) alg_s = argv[++i];
        else if (!strcmp(argv[i], "--p") && i + 1 < argc) p_arg = (float)atof(argv[++i]);
        else if (!strcmp(argv[i], "--eps") && i + 1 < argc) eps_arg = (float)atof(argv[++i]);
        else if (argv[i][0] != '-' && !prb) prb = argv[i];
        else {
            fprintf(stderr, "usage: %s --sdt f32|bf16|f16 --ddt f32|bf16|f16 [--time S] "
                            "[--min-iters N] [--max-iters N] [--warmup-time S] [--warmup-min N] "
                            "[--no-check] [--label NAME] [--alg mean|sum|max|min|mul|norm_lp_max|norm_lp_sum|"
                            "norm_lp_power_p_max|norm_lp_power_p_sum --p F --eps F] SRC:DST\n", argv[0]);
            return 1;
        }
    }
    if (!prb) { fprintf(stderr, "missing problem SRC:DST\n"); return 1; }
    if (!ddt_s) ddt_s = sdt_s;
    if (max_iters < min_iters) max_iters = min_iters;
    dnnl_data_type_t sdt = parse_dt(sdt_s), ddt = parse_dt(ddt_s);

    const char *colon = strchr(prb, ':');
    if (!colon) { fprintf(stderr, "problem must be SRC:DST\n"); return 1; }
    dnnl_dims_t sd, dd;
    int nd = parse_dims(prb, colon, sd);
    int ndd = parse_dims(colon + 1, prb + strlen(prb), dd);
    if (nd <= 0 || nd != ndd) { fprintf(stderr, "bad dims in '%s'\n", prb); return 1; }
    for (int i = 0; i < nd; i++)
        if (dd[i] != sd[i] && dd[i] != 1) { fprintf(stderr, "dst dim %d must be 1 or equal src\n", i); return 1; }

    static const dnnl_format_tag_t tags[] = {dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
    if (nd > 6) { fprintf(stderr, "max 6 dims\n"); return 1; }

    size_t n_src = 1, n_dst = 1;
    for (int i = 0; i < nd; i++) { n_src *= (size_t)sd[i]; n_dst *= (size_t)dd[i]; }
    size_t src_bytes = n_src * dt_size(sdt), dst_bytes = n_dst * dt_size(ddt);

    int nthr = omp_get_max_threads();
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    const dnnl_version_t *ver = dnnl_version();

    printf("onednn label=%s prb=%s sdt=%s ddt=%s threads=%d isa=%s ver=%d.%d.%d ",
           label, prb, sdt_s, ddt_s, nthr, dnnl_cpu_isa2str(isa), ver->major, ver->minor, ver->patch);

    dnnl_engine_t eng;
    CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    dnnl_stream_t strm;
    CHECK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));

    dnnl_memory_desc_t src_md, dst_md;
    (void)tags;
    CHECK(dnnl_memory_desc_init_by_tag(&src_md, nd, sd, sdt, tag_of(stag_s, nd)));
    CHECK(dnnl_memory_desc_init_by_tag(&dst_md, nd, dd, ddt, tag_of(dtag_s, nd)));
    if (*stag_s || *dtag_s || sdt != ddt || sdt == dnnl_s8 || sdt == dnnl_u8 || has_sum) check = 0;
    printf("stag=%s dtag=%s ", *stag_s ? stag_s : "abx", *dtag_s ? dtag_s : "abx");

    dnnl_reduction_desc_t rd;
    dnnl_alg_kind_t alg = alg_of(alg_s);
    if (alg == dnnl_alg_kind_undef) { fprintf(stderr, "unknown --alg %s\n", alg_s); return 1; }
    if (alg != dnnl_reduction_mean) check = 0; // the built-in reference check is a mean
    printf("alg=%s ", alg_s);
    dnnl_status_t st = dnnl_reduction_desc_init(&rd, alg, &src_md, &dst_md, p_arg, eps_arg);
    if (st != dnnl_success) {
        printf("status=desc_init_%s\n", dnnl_status2str(st));
        return 0;
    }
    dnnl_primitive_desc_t pd;
    double tc0 = now_s();
    dnnl_primitive_attr_t attr = NULL;
    if (has_sum) {
        dnnl_post_ops_t po;
        CHECK(dnnl_primitive_attr_create(&attr));
        CHECK(dnnl_post_ops_create(&po));
        for (int k = 0; k < has_sum; k++) {
            dnnl_data_type_t sum_dt = *sum_dt_s[k] ? parse_dt(sum_dt_s[k]) : dnnl_data_type_undef;
            CHECK(dnnl_post_ops_append_sum_v3(po, sum_scale[k], sum_zp[k], sum_dt));
            printf("sum=%g:%d:%s ", sum_scale[k], sum_zp[k], *sum_dt_s[k] ? sum_dt_s[k] : "undef");
        }
    }
    st = dnnl_primitive_desc_create(&pd, &rd, attr, eng, NULL);
    if (st != dnnl_success) {
        printf("impl=none status=%s\n", dnnl_status2str(st));
        return 0;
    }
    const char *impl = NULL;
    CHECK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
    dnnl_primitive_t prim;
    CHECK(dnnl_primitive_create(&prim, pd));
    double create_us = (now_s() - tc0) * 1e6;

    // Blocked tags pad: size the buffers from the memory descriptors.
    src_bytes = dnnl_memory_desc_get_size(&src_md);
    dst_bytes = dnnl_memory_desc_get_size(&dst_md);
    void *src = big_alloc(src_bytes), *dst = big_alloc(dst_bytes);
    for (size_t i = 0; i < src_bytes / dt_size(sdt); i++) store_elem(src, sdt, i, sdt == dnnl_s8 || sdt == dnnl_u8 ? frand() * 100 - (sdt == dnnl_s8) * 100 : frand());
    memset(dst, 0, dst_bytes);

    dnnl_memory_t src_m, dst_m;
    CHECK(dnnl_memory_create(&src_m, &src_md, eng, src));
    CHECK(dnnl_memory_create(&dst_m, &dst_md, eng, dst));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_DST, dst_m}};

    // Warm-up: at least warmup_min runs and warmup_time seconds.
    double t0 = now_s();
    long w = 0;
    do {
        CHECK(dnnl_primitive_execute(prim, strm, 2, args));
        CHECK(dnnl_stream_wait(strm));
        w++;
    } while (w < warmup_min || now_s() - t0 < warmup_time);

    double *times = malloc(sizeof(double) * (size_t)max_iters);
    long it = 0;
    double tstart = now_s();
    while (it < max_iters) {
        double a = now_s();
        dnnl_primitive_execute(prim, strm, 2, args);
        dnnl_stream_wait(strm);
        double b = now_s();
        times[it++] = b - a;
        if (it >= min_iters && b - tstart >= time_budget) break;
    }
    qsort(times, (size_t)it, sizeof(double), cmp_double);
    double med = (it & 1) ? times[it / 2] : 0.5 * (times[it / 2 - 1] + times[it / 2]);
    double mn = times[0];
    double bytes = (double)(src_bytes + dst_bytes);

    // Correctness vs double reference on the actual (rounded) inputs.
    double maxerr = -1;
    if (check) {
        double *ref = calloc(n_dst, sizeof(double));
        size_t dstr[DNNL_MAX_NDIMS];  // dst strides, 0 for reduced dims
        size_t s = 1;
        for (int i = nd - 1; i >= 0; i--) { dstr[i] = dd[i] == 1 && sd[i] != 1 ? 0 : s; s *= (size_t)dd[i]; }
        long idx[DNNL_MAX_NDIMS] = {0};
        size_t inner = (size_t)sd[nd - 1], doff = 0;
        for (size_t base = 0; base < n_src; base += inner) {
            if (dstr[nd - 1] == 0) {
                double acc = 0;
                for (size_t j = 0; j < inner; j++) acc += load_elem(src, sdt, base + j);
                ref[doff] += acc;
            } else {
                for (size_t j = 0; j < inner; j++) ref[doff + j] += load_elem(src, sdt, base + j);
            }
            for (int d = nd - 2; d >= 0; d--) {  // odometer over outer dims
                idx[d]++;
                doff += dstr[d];
                if (idx[d] < sd[d]) break;
                doff -= dstr[d] * (size_t)sd[d];
                idx[d] = 0;
            }
        }
        double cnt = (double)n_src / (double)n_dst;
        maxerr = 0;
        for (size_t i = 0; i < n_dst; i++) {
            double e = fabs(ref[i] / cnt - (double)load_elem(dst, ddt, i));
            if (e > maxerr) maxerr = e;
        }
        free(ref);
    }

    printf("impl=%s status=ok create_us=%.0f iters=%ld median_us=%.3f min_us=%.3f "
           "gbps_median=%.2f gbps_best=%.2f src_bytes=%zu dst_bytes=%zu maxabserr=%.3g\n",
           impl, create_us, it, med * 1e6, mn * 1e6, bytes / med * 1e-9, bytes / mn * 1e-9,
           src_bytes, dst_bytes, maxerr);

    dnnl_primitive_destroy(prim);
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_destroy(src_m);
    dnnl_memory_destroy(dst_m);
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    free(times);
    free(src);
    free(dst);
    return 0;
}
