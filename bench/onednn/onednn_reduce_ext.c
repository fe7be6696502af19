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

static int parse_dims(const char *s, const char *end, dnnl_dims_t d) {
    int n = 0;
    while (s < end) {
        char *e;
        long v = strtol(s, &e, 10);
        if (e == s || v <= 0 || n >= DNNL_MAX_NDIMS) return -1;
        d[n++] = v;
        s = e;
        if (s < end) {
            if (*s != 'x') return -1;
            s++;
        }
    }
    return n;
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

static size_t dt_size(dnnl_data_type_t dt) { return dt == dnnl_f32 || dt == dnnl_s32 ? 4 : dt == dnnl_s8 || dt == dnnl_u8 ? 1 : 2; }
static const struct { const char *name; dnnl_format_tag_t tag; } tag_table[] = {
    {"a", dnnl_a},
    {"ab", dnnl_ab},
    {"abc", dnnl_abc},
    {"abcd", dnnl_abcd},
    {"acbd", dnnl_acbd},
    {"abcde", dnnl_abcde},
    {"abcdef", dnnl_abcdef},
    {"abdc", dnnl_abdc},
    {"abdec", dnnl_abdec},
    {"acb", dnnl_acb},
    {"acbde", dnnl_acbde},
    {"acbdef", dnnl_acbdef},
    {"acdb", dnnl_acdb},
    {"acdeb", dnnl_acdeb},
    {"ba", dnnl_ba},
    {"bac", dnnl_bac},
    {"bacd", dnnl_bacd},
    {"bacde", dnnl_bacde},
    {"bca", dnnl_bca},
    {"bcda", dnnl_bcda},
    {"bcdea", dnnl_bcdea},
    {"cba", dnnl_cba},
    {"cdba", dnnl_cdba},
    {"dcab", dnnl_dcab},
    {"cdeba", dnnl_cdeba},
    {"decab", dnnl_decab},
    {"defcab", dnnl_defcab},
    {"abced", dnnl_abced},
    {"abcdfe", dnnl_abcdfe},
    {"Abc16a", dnnl_Abc16a},
    {"ABc16a16b", dnnl_ABc16a16b},
    {"ABc32a32b", dnnl_ABc32a32b},
    {"ABc4a4b", dnnl_ABc4a4b},
    {"aBc16b", dnnl_aBc16b},
    {"ABc16b16a", dnnl_ABc16b16a},
    {"Abc4a", dnnl_Abc4a},
    {"aBc32b", dnnl_aBc32b},
    {"aBc4b", dnnl_aBc4b},
    {"ABc4b16a4b", dnnl_ABc4b16a4b},
    {"ABc2b8a4b", dnnl_ABc2b8a4b},
    {"ABc16b16a4b", dnnl_ABc16b16a4b},
    {"ABc16b16a2b", dnnl_ABc16b16a2b},
    {"ABc4b4a", dnnl_ABc4b4a},
    {"ABc8a16b2a", dnnl_ABc8a16b2a},
    {"ABc8a8b", dnnl_ABc8a8b},
    {"ABc8a4b", dnnl_ABc8a4b},
    {"aBc8b", dnnl_aBc8b},
    {"ABc8b16a2b", dnnl_ABc8b16a2b},
    {"BAc8a16b2a", dnnl_BAc8a16b2a},
    {"ABc8b8a", dnnl_ABc8b8a},
    {"Abcd16a", dnnl_Abcd16a},
    {"Abcd8a", dnnl_Abcd8a},
    {"ABcd16a16b", dnnl_ABcd16a16b},
    {"Abcd32a", dnnl_Abcd32a},
    {"ABcd32a32b", dnnl_ABcd32a32b},
    {"aBcd16b", dnnl_aBcd16b},
    {"ABcd16b16a", dnnl_ABcd16b16a},
    {"aBCd16b16c", dnnl_aBCd16b16c},
    {"aBCd16c16b", dnnl_aBCd16c16b},
    {"Abcd4a", dnnl_Abcd4a},
    {"aBcd32b", dnnl_aBcd32b},
    {"aBcd4b", dnnl_aBcd4b},
    {"ABcd4b16a4b", dnnl_ABcd4b16a4b},
    {"ABcd16b16a4b", dnnl_ABcd16b16a4b},
    {"ABcd16b16a2b", dnnl_ABcd16b16a2b},
    {"ABcd4b4a", dnnl_ABcd4b4a},
    {"ABcd4a4b", dnnl_ABcd4a4b},
    {"aBCd2c4b2c", dnnl_aBCd2c4b2c},
    {"aBCd4b8c2b", dnnl_aBCd4b8c2b},
    {"aBCd4c16b4c", dnnl_aBCd4c16b4c},
    {"aBCd2c8b4c", dnnl_aBCd2c8b4c},
    {"aBCd16c16b4c", dnnl_aBCd16c16b4c},
    {"aBCd16c16b2c", dnnl_aBCd16c16b2c},
    {"aBCd4c4b", dnnl_aBCd4c4b},
    {"aBCd4b4c", dnnl_aBCd4b4c},
    {"ABcd8a16b2a", dnnl_ABcd8a16b2a},
    {"ABcd2b8a4b", dnnl_ABcd2b8a4b},
    {"ABcd8a8b", dnnl_ABcd8a8b},
    {"ABcd8a4b", dnnl_ABcd8a4b},
    {"aBcd8b", dnnl_aBcd8b},
    {"aBCd4c8b2c", dnnl_aBCd4c8b2c},
    {"ABcd8b16a2b", dnnl_ABcd8b16a2b},
    {"aBCd8b16c2b", dnnl_aBCd8b16c2b},
    {"BAcd8a16b2a", dnnl_BAcd8a16b2a},
    {"ABcd8b8a", dnnl_ABcd8b8a},
    {"aBCd8b8c", dnnl_aBCd8b8c},
    {"aBCd8b4c", dnnl_aBCd8b4c},
    {"aBCd8c16b2c", dnnl_aBCd8c16b2c},
    {"ABcde8a16b2a", dnnl_ABcde8a16b2a},
    {"aCBd8b16c2b", dnnl_aCBd8b16c2b},
    {"aBCd8c8b", dnnl_aBCd8c8b},
    {"Abcde16a", dnnl_Abcde16a},
    {"Abcde32a", dnnl_Abcde32a},
    {"ABcde16a16b", dnnl_ABcde16a16b},
    {"BAcde8a16b2a", dnnl_BAcde8a16b2a},
    {"aBCd2b4c2b", dnnl_aBCd2b4c2b},
    {"ABcde4b16a4b", dnnl_ABcde4b16a4b},
    {"ABcde2b8a4b", dnnl_ABcde2b8a4b},
    {"aBcde16b", dnnl_aBcde16b},
    {"ABcde16b16a", dnnl_ABcde16b16a},
    {"aBCde16b16c", dnnl_aBCde16b16c},
    {"aBCde16c16b", dnnl_aBCde16c16b},
    {"aBCde2c8b4c", dnnl_aBCde2c8b4c},
    {"Abcde4a", dnnl_Abcde4a},
    {"aBcde32b", dnnl_aBcde32b},
    {"aBcde4b", dnnl_aBcde4b},
    {"ABcde4b4a", dnnl_ABcde4b4a},
    {"ABcde4a4b", dnnl_ABcde4a4b},
    {"aBCde4b4c", dnnl_aBCde4b4c},
    {"aBCde2c4b2c", dnnl_aBCde2c4b2c},
    {"aBCde4b8c2b", dnnl_aBCde4b8c2b},
    {"aBCde4c16b4c", dnnl_aBCde4c16b4c},
    {"aBCde16c16b4c", dnnl_aBCde16c16b4c},
    {"aBCde16c16b2c", dnnl_aBCde16c16b2c},
    {"aBCde4c4b", dnnl_aBCde4c4b},
    {"Abcde8a", dnnl_Abcde8a},
    {"ABcde8a8b", dnnl_ABcde8a8b},
    {"ABcde8a4b", dnnl_ABcde8a4b},
    {"BAcde16b16a", dnnl_BAcde16b16a},
    {"aBcde8b", dnnl_aBcde8b},
    {"ABcde8b16a2b", dnnl_ABcde8b16a2b},
    {"aBCde8b16c2b", dnnl_aBCde8b16c2b},
    {"aBCde4c8b2c", dnnl_aBCde4c8b2c},
    {"aCBde8b16c2b", dnnl_aCBde8b16c2b},
    {"ABcde8b8a", dnnl_ABcde8b8a},
    {"ABcde32a32b", dnnl_ABcde32a32b},
    {"aBCde8b8c", dnnl_aBCde8b8c},
    {"aBCde8b4c", dnnl_aBCde8b4c},
    {"ABc4a8b8a4b", dnnl_ABc4a8b8a4b},
    {"ABcd4a8b8a4b", dnnl_ABcd4a8b8a4b},
    {"ABcde4a8b8a4b", dnnl_ABcde4a8b8a4b},
    {"BAc4b8a8b4a", dnnl_BAc4b8a8b4a},
    {"BAcd4b8a8b4a", dnnl_BAcd4b8a8b4a},
    {"BAcde4b8a8b4a", dnnl_BAcde4b8a8b4a},
    {"ABcd2a8b8a2b", dnnl_ABcd2a8b8a2b},
    {"aBCd4b8c8b4c", dnnl_aBCd4b8c8b4c},
    {"aBCde4b8c8b4c", dnnl_aBCde4b8c8b4c},
    {"aBCde2b8c8b2c", dnnl_aBCde2b8c8b2c},
    {"aBCde8c16b2c", dnnl_aBCde8c16b2c},
    {"aBCde8c8b", dnnl_aBCde8c8b},
    {"aBCde2b4c2b", dnnl_aBCde2b4c2b},
    {"aBcdef16b", dnnl_aBcdef16b},
    {"aBCdef16b16c", dnnl_aBCdef16b16c},
    {"aBCdef16c16b", dnnl_aBCdef16c16b},
    {"aBCdef4c16b4c", dnnl_aBCdef4c16b4c},
    {"aBCdef2c8b4c", dnnl_aBCdef2c8b4c},
    {"aBCdef4c8b2c", dnnl_aBCdef4c8b2c},
    {"aBCdef2b4c2b", dnnl_aBCdef2b4c2b},
    {"aBcdef4b", dnnl_aBcdef4b},
    {"aBCdef4c4b", dnnl_aBCdef4c4b},
    {"aBCdef4b4c", dnnl_aBCdef4b4c},
    {"aBCdef2c4b2c", dnnl_aBCdef2c4b2c},
    {"aBCdef4b8c2b", dnnl_aBCdef4b8c2b},
    {"aBCdef8b8c", dnnl_aBCdef8b8c},
    {"aBCdef8b4c", dnnl_aBCdef8b4c},
    {"aBCdef8c16b2c", dnnl_aBCdef8c16b2c},
    {"aBCdef4b8c8b4c", dnnl_aBCdef4b8c8b4c},
    {"aBCdef8b16c2b", dnnl_aBCdef8b16c2b},
    {"aCBdef8b16c2b", dnnl_aCBdef8b16c2b},
    {"aBCdef8c8b", dnnl_aBCdef8c8b},
    {"aBdc16b", dnnl_aBdc16b},
    {"aBdC16b2c", dnnl_aBdC16b2c},
    {"aBdC16b4c", dnnl_aBdC16b4c},
    {"aBdc4b", dnnl_aBdc4b},
    {"aBdc8b", dnnl_aBdc8b},
    {"aBdec16b", dnnl_aBdec16b},
    {"aBdeC16b2c", dnnl_aBdeC16b2c},
    {"aBdeC16b4c", dnnl_aBdeC16b4c},
    {"aBdec32b", dnnl_aBdec32b},
    {"aBdec4b", dnnl_aBdec4b},
    {"aBdec8b", dnnl_aBdec8b},
    {"aBdefc16b", dnnl_aBdefc16b},
    {"aBdefC16b2c", dnnl_aBdefC16b2c},
    {"aCBdef16c16b", dnnl_aCBdef16c16b},
    {"aBdefc4b", dnnl_aBdefc4b},
    {"aBdefc8b", dnnl_aBdefc8b},
    {"Abcdef16a", dnnl_Abcdef16a},
    {"Abcdef32a", dnnl_Abcdef32a},
    {"aBedc16b", dnnl_aBedc16b},
    {"Acb16a", dnnl_Acb16a},
    {"AcB16a2b", dnnl_AcB16a2b},
    {"AcB16a4b", dnnl_AcB16a4b},
    {"Acb4a", dnnl_Acb4a},
    {"Acb8a", dnnl_Acb8a},
    {"aCBd16b16c", dnnl_aCBd16b16c},
    {"aCBd16c16b", dnnl_aCBd16c16b},
    {"aCBde16b16c", dnnl_aCBde16b16c},
    {"aCBde16c16b", dnnl_aCBde16c16b},
    {"Acdb16a", dnnl_Acdb16a},
    {"AcdB16a2b", dnnl_AcdB16a2b},
    {"AcdB16a4b", dnnl_AcdB16a4b},
    {"Acdb32a", dnnl_Acdb32a},
    {"Acdb4a", dnnl_Acdb4a},
    {"Acdb8a", dnnl_Acdb8a},
    {"Acdeb16a", dnnl_Acdeb16a},
    {"AcdeB16a2b", dnnl_AcdeB16a2b},
    {"Acdeb4a", dnnl_Acdeb4a},
    {"Acdeb8a", dnnl_Acdeb8a},
    {"Adcb16a", dnnl_Adcb16a},
    {"BAc16a16b", dnnl_BAc16a16b},
    {"BAc16b16a", dnnl_BAc16b16a},
    {"BAcd16a16b", dnnl_BAcd16a16b},
    {"BAcd16b16a", dnnl_BAcd16b16a},
    {"aCBd4c8b8c4b", dnnl_aCBd4c8b8c4b},
    {"aCBde4c8b8c4b", dnnl_aCBde4c8b8c4b},
    {"aCBdef4c8b8c4b", dnnl_aCBdef4c8b8c4b},
    {"BAcde16a16b", dnnl_BAcde16a16b},
    {"aCBdef16b16c", dnnl_aCBdef16b16c},
    {"abdfce", dnnl_abdfce},
    {"abdefc", dnnl_abdefc},
    {"ABc16b32a", dnnl_ABc16b32a},
    {"ABc16b64a", dnnl_ABc16b64a},
    {"ABc4b32a4b", dnnl_ABc4b32a4b},
    {"ABc4b64a4b", dnnl_ABc4b64a4b},
    {"ABc8b32a2b", dnnl_ABc8b32a2b},
    {"ABc8b64a2b", dnnl_ABc8b64a2b},
    {"AB16b16a", dnnl_AB16b16a},
    {"AB16b32a", dnnl_AB16b32a},
    {"AB16b64a", dnnl_AB16b64a},
    {"AB8b16a2b", dnnl_AB8b16a2b},
    {"AB8b32a2b", dnnl_AB8b32a2b},
    {"AB8b64a2b", dnnl_AB8b64a2b},
    {"AB4b16a4b", dnnl_AB4b16a4b},
    {"AB4b32a4b", dnnl_AB4b32a4b},
    {"AB4b64a4b", dnnl_AB4b64a4b},
    {"AB16b16a4b", dnnl_AB16b16a4b},
    {"ABcd16b32a", dnnl_ABcd16b32a},
    {"ABcd16b64a", dnnl_ABcd16b64a},
    {"ABcd4b32a4b", dnnl_ABcd4b32a4b},
    {"ABcd4b64a4b", dnnl_ABcd4b64a4b},
    {"ABcd8b32a2b", dnnl_ABcd8b32a2b},
    {"ABcd8b64a2b", dnnl_ABcd8b64a2b},
    {"ABcde4b32a4b", dnnl_ABcde4b32a4b},
    {"ABcde4b64a4b", dnnl_ABcde4b64a4b},
    {"ABcde16b16a4b", dnnl_ABcde16b16a4b},
    {"ABcde16b16a2b", dnnl_ABcde16b16a2b},
    {"ABcde16b32a", dnnl_ABcde16b32a},
    {"ABcde16b64a", dnnl_ABcde16b64a},
    {"ABcde8b32a2b", dnnl_ABcde8b32a2b},
    {"ABcde8b64a2b", dnnl_ABcde8b64a2b},
    {"aBCdef16c16b4c", dnnl_aBCdef16c16b4c},
    {"aBCdef16c16b2c", dnnl_aBCdef16c16b2c},
    {"AB32a32b8a4b", dnnl_AB32a32b8a4b},
    {"AB8a4b", dnnl_AB8a4b},
    {"AB32a32b8a2b", dnnl_AB32a32b8a2b},
    {"AB8a2b", dnnl_AB8a2b},
    {"abDc32d", dnnl_abDc32d},
    {"abDC32d4c", dnnl_abDC32d4c},
    {"abdEc32e", dnnl_abdEc32e},
    {"abdEC32e2c", dnnl_abdEC32e2c},
    {"abdEC32e4c", dnnl_abdEC32e4c},
    {"aBdefC16b4c", dnnl_aBdefC16b4c},
    {"AcdeB16a4b", dnnl_AcdeB16a4b},
    {"ABcd16a16b2a", dnnl_ABcd16a16b2a},
    {"ABc16a16b2a", dnnl_ABc16a16b2a},
    {"aBCd16b16c2b", dnnl_aBCd16b16c2b},
    {"aBCde16b16c2b", dnnl_aBCde16b16c2b},
    {"Acb32a", dnnl_Acb32a},
    {"AcB32a2b", dnnl_AcB32a2b},
    {"AcB32a4b", dnnl_AcB32a4b},
    {"Acb48a", dnnl_Acb48a},
    {"AcB48a2b", dnnl_AcB48a2b},
    {"AcB48a4b", dnnl_AcB48a4b},
    {"Acb64a", dnnl_Acb64a},
    {"AcB64a2b", dnnl_AcB64a2b},
    {"AcB64a4b", dnnl_AcB64a4b},
    {"cBa2b", dnnl_cBa2b},
    {"cBa4b", dnnl_cBa4b},
    {"aBdc32b", dnnl_aBdc32b},
    {"aBdC32b2c", dnnl_aBdC32b2c},
    {"aBdC32b4c", dnnl_aBdC32b4c},
    {"aBdc48b", dnnl_aBdc48b},
    {"aBdC48b2c", dnnl_aBdC48b2c},
    {"aBdC48b4c", dnnl_aBdC48b4c},
    {"aBdc64b", dnnl_aBdc64b},
    {"aBdC64b2c", dnnl_aBdC64b2c},
    {"aBdC64b4c", dnnl_aBdC64b4c},
    {"adcb", dnnl_adcb},
    {"adCb2c", dnnl_adCb2c},
    {"adCb4c", dnnl_adCb4c},
    {"AcdB32a2b", dnnl_AcdB32a2b},
    {"AcdB32a4b", dnnl_AcdB32a4b},
    {"Acdb48a", dnnl_Acdb48a},
    {"AcdB48a2b", dnnl_AcdB48a2b},
    {"AcdB48a4b", dnnl_AcdB48a4b},
    {"Acdb64a", dnnl_Acdb64a},
    {"AcdB64a2b", dnnl_AcdB64a2b},
    {"AcdB64a4b", dnnl_AcdB64a4b},
    {"cdBa2b", dnnl_cdBa2b},
    {"cdBa4b", dnnl_cdBa4b},
    {"aBdeC32b2c", dnnl_aBdeC32b2c},
    {"aBdeC32b4c", dnnl_aBdeC32b4c},
    {"aBdec48b", dnnl_aBdec48b},
    {"aBdeC48b2c", dnnl_aBdeC48b2c},
    {"aBdeC48b4c", dnnl_aBdeC48b4c},
    {"aBdec64b", dnnl_aBdec64b},
    {"aBdeC64b2c", dnnl_aBdeC64b2c},
    {"aBdeC64b4c", dnnl_aBdeC64b4c},
    {"adecb", dnnl_adecb},
    {"adeCb2c", dnnl_adeCb2c},
    {"adeCb4c", dnnl_adeCb4c},
    {"Acdeb32a", dnnl_Acdeb32a},
    {"AcdeB32a2b", dnnl_AcdeB32a2b},
    {"AcdeB32a4b", dnnl_AcdeB32a4b},
    {"Acdeb48a", dnnl_Acdeb48a},
    {"AcdeB48a2b", dnnl_AcdeB48a2b},
    {"AcdeB48a4b", dnnl_AcdeB48a4b},
    {"Acdeb64a", dnnl_Acdeb64a},
    {"AcdeB64a2b", dnnl_AcdeB64a2b},
    {"AcdeB64a4b", dnnl_AcdeB64a4b},
    {"cdeBa2b", dnnl_cdeBa2b},
    {"cdeBa4b", dnnl_cdeBa4b},
    {"aBdefc32b", dnnl_aBdefc32b},
    {"aBdefC32b2c", dnnl_aBdefC32b2c},
    {"aBdefC32b4c", dnnl_aBdefC32b4c},
    {"aBdefc48b", dnnl_aBdefc48b},
    {"aBdefC48b2c", dnnl_aBdefC48b2c},
    {"aBdefC48b4c", dnnl_aBdefC48b4c},
    {"aBdefc64b", dnnl_aBdefc64b},
    {"aBdefC64b2c", dnnl_aBdefC64b2c},
    {"aBdefC64b4c", dnnl_aBdefC64b4c},
    {"adefcb", dnnl_adefcb},
    {"adefCb2c", dnnl_adefCb2c},
    {"adefCb4c", dnnl_adefCb4c},
    {"AB16b32a4b", dnnl_AB16b32a4b},
    {"AB16b48a4b", dnnl_AB16b48a4b},
    {"AB16b64a4b", dnnl_AB16b64a4b},
    {"AB16b16a2b", dnnl_AB16b16a2b},
    {"AB16b32a2b", dnnl_AB16b32a2b},
    {"AB16b48a2b", dnnl_AB16b48a2b},
    {"AB16b64a2b", dnnl_AB16b64a2b},
    {"ABc16b32a4b", dnnl_ABc16b32a4b},
    {"ABc16b48a4b", dnnl_ABc16b48a4b},
    {"ABc16b64a4b", dnnl_ABc16b64a4b},
    {"ABc16b32a2b", dnnl_ABc16b32a2b},
    {"ABc16b48a2b", dnnl_ABc16b48a2b},
    {"ABc16b64a2b", dnnl_ABc16b64a2b},
    {"ABcd16b32a4b", dnnl_ABcd16b32a4b},
    {"ABcd16b48a4b", dnnl_ABcd16b48a4b},
    {"ABcd16b64a4b", dnnl_ABcd16b64a4b},
    {"ABcd16b32a2b", dnnl_ABcd16b32a2b},
    {"ABcd16b48a2b", dnnl_ABcd16b48a2b},
    {"ABcd16b64a2b", dnnl_ABcd16b64a2b},
    {"ABcde16b32a4b", dnnl_ABcde16b32a4b},
    {"ABcde16b48a4b", dnnl_ABcde16b48a4b},
    {"ABcde16b64a4b", dnnl_ABcde16b64a4b},
    {"ABcde16b32a2b", dnnl_ABcde16b32a2b},
    {"ABcde16b48a2b", dnnl_ABcde16b48a2b},
    {"ABcde16b64a2b", dnnl_ABcde16b64a2b},
    {"ABc32a16b", dnnl_ABc32a16b},
    {"ABcd32a16b", dnnl_ABcd32a16b},
    {"ABcde32a16b", dnnl_ABcde32a16b},
    {"AB48a16b", dnnl_AB48a16b},
    {"AB48a32b", dnnl_AB48a32b},
    {"ABc40a16b", dnnl_ABc40a16b},
    {"ABc40a32b", dnnl_ABc40a32b},
    {"aBC48b16c", dnnl_aBC48b16c},
    {"aBC48b32c", dnnl_aBC48b32c},
    {"ABcd40a16b", dnnl_ABcd40a16b},
    {"ABcd40a32b", dnnl_ABcd40a32b},
    {"abCd32c", dnnl_abCd32c},
    {"abdCe32c", dnnl_abdCe32c},
    {"abdCE32c2e", dnnl_abdCE32c2e},
    {"BA16a16b2a", dnnl_BA16a16b2a},
    {"BA16a32b2a", dnnl_BA16a32b2a},
    {"BA16a48b2a", dnnl_BA16a48b2a},
    {"BA16a64b2a", dnnl_BA16a64b2a},
    {"BA16a16b4a", dnnl_BA16a16b4a},
    {"BA16a32b4a", dnnl_BA16a32b4a},
    {"BA16a48b4a", dnnl_BA16a48b4a},
    {"BA16a64b4a", dnnl_BA16a64b4a},
    {"ABcd8a2b", dnnl_ABcd8a2b},
    {"aBdeC16c16b2c", dnnl_aBdeC16c16b2c},
    {"aBdeC16c16b4c", dnnl_aBdeC16c16b4c},
    {"aBdefC16c16b2c", dnnl_aBdefC16c16b2c},
    {"AcB16b16a2b", dnnl_AcB16b16a2b},
    {"AcB16b16a4b", dnnl_AcB16b16a4b},
    {"AcdB16b16a2b", dnnl_AcdB16b16a2b},
    {"AcdB16b16a4b", dnnl_AcdB16b16a4b},
    {"AcdeB16b16a2b", dnnl_AcdeB16b16a2b},
    {"aBdefC16c16b4c", dnnl_aBdefC16c16b4c},
    {"AcdeB16b16a4b", dnnl_AcdeB16b16a4b},
    {"AcB16b32a2b", dnnl_AcB16b32a2b},
    {"AcB16b32a4b", dnnl_AcB16b32a4b},
    {"AcB16b48a2b", dnnl_AcB16b48a2b},
    {"AcB16b48a4b", dnnl_AcB16b48a4b},
    {"AcB16b64a2b", dnnl_AcB16b64a2b},
    {"AcB16b64a4b", dnnl_AcB16b64a4b},
    {"aBdC16c16b2c", dnnl_aBdC16c16b2c},
    {"aBdC16c16b4c", dnnl_aBdC16c16b4c},
    {"aBdC16c32b2c", dnnl_aBdC16c32b2c},
    {"aBdC16c32b4c", dnnl_aBdC16c32b4c},
    {"aBdC16c48b2c", dnnl_aBdC16c48b2c},
    {"aBdC16c48b4c", dnnl_aBdC16c48b4c},
    {"aBdC16c64b2c", dnnl_aBdC16c64b2c},
    {"aBdC16c64b4c", dnnl_aBdC16c64b4c},
    {"AcdB16b32a2b", dnnl_AcdB16b32a2b},
    {"AcdB16b32a4b", dnnl_AcdB16b32a4b},
    {"AcdB16b48a2b", dnnl_AcdB16b48a2b},
    {"AcdB16b48a4b", dnnl_AcdB16b48a4b},
    {"AcdB16b64a2b", dnnl_AcdB16b64a2b},
    {"AcdB16b64a4b", dnnl_AcdB16b64a4b},
    {"aBdeC16c32b2c", dnnl_aBdeC16c32b2c},
    {"aBdeC16c32b4c", dnnl_aBdeC16c32b4c},
    {"aBdeC16c48b2c", dnnl_aBdeC16c48b2c},
    {"aBdeC16c48b4c", dnnl_aBdeC16c48b4c},
    {"aBdeC16c64b2c", dnnl_aBdeC16c64b2c},
    {"aBdeC16c64b4c", dnnl_aBdeC16c64b4c},
    {"AcdeB16b32a2b", dnnl_AcdeB16b32a2b},
    {"AcdeB16b32a4b", dnnl_AcdeB16b32a4b},
    {"AcdeB16b48a2b", dnnl_AcdeB16b48a2b},
    {"AcdeB16b48a4b", dnnl_AcdeB16b48a4b},
    {"AcdeB16b64a2b", dnnl_AcdeB16b64a2b},
    {"AcdeB16b64a4b", dnnl_AcdeB16b64a4b},
    {"aBdefC16c32b2c", dnnl_aBdefC16c32b2c},
    {"aBdefC16c32b4c", dnnl_aBdefC16c32b4c},
    {"aBdefC16c48b2c", dnnl_aBdefC16c48b2c},
    {"aBdefC16c48b4c", dnnl_aBdefC16c48b4c},
    {"aBdefC16c64b2c", dnnl_aBdefC16c64b2c},
    {"aBdefC16c64b4c", dnnl_aBdefC16c64b4c},
    {"decbA16a", dnnl_decbA16a},
    {"ABc4a2b", dnnl_ABc4a2b},
    {"ABc8a2b", dnnl_ABc8a2b},
    {"aBCd8b2c", dnnl_aBCd8b2c},
    {"ABcde4a2b", dnnl_ABcde4a2b},
    {"ABcde8a2b", dnnl_ABcde8a2b},
    {"ABcde40a16b", dnnl_ABcde40a16b},
    {"ABcde40a32b", dnnl_ABcde40a32b},
    {"aBCde8b2c", dnnl_aBCde8b2c},
    {"ABcde4a8b8a2b", dnnl_ABcde4a8b8a2b},
    {"ABcd4a8b8a2b", dnnl_ABcd4a8b8a2b},
    {"ABc4a8b8a2b", dnnl_ABc4a8b8a2b},
    {"aBCdef4b8c8b2c", dnnl_aBCdef4b8c8b2c},
    {"aBCde4b8c8b2c", dnnl_aBCde4b8c8b2c},
    {"aBCd4b8c8b2c", dnnl_aBCd4b8c8b2c},
    {"BAcde4b8a8b2a", dnnl_BAcde4b8a8b2a},
    {"BAcd4b8a8b2a", dnnl_BAcd4b8a8b2a},
    {"BAc4b8a8b2a", dnnl_BAc4b8a8b2a},
    {"aCBdef4c8b8c2b", dnnl_aCBdef4c8b8c2b},
    {"aCBde4c8b8c2b", dnnl_aCBde4c8b8c2b},
    {"aCBd4c8b8c2b", dnnl_aCBd4c8b8c2b},
    {"aBCdef8b2c", dnnl_aBCdef8b2c},
    {"AB32a16b", dnnl_AB32a16b},
    {"AB32a32b", dnnl_AB32a32b},
    {"BA4b8a8b2a", dnnl_BA4b8a8b2a},
    {"BA4b8a8b4a", dnnl_BA4b8a8b4a},
    {"aBC32b16c", dnnl_aBC32b16c},
    {"aBC32b32c", dnnl_aBC32b32c},
    {"aCB4c8b8c2b", dnnl_aCB4c8b8c2b},
    {"aCB4c8b8c4b", dnnl_aCB4c8b8c4b},
    {"ABcd4a2b", dnnl_ABcd4a2b},
    {"ABc2b8a16b4a", dnnl_ABc2b8a16b4a},
    {"ABcd2b8a16b4a", dnnl_ABcd2b8a16b4a},
    {"ABcde2b8a16b4a", dnnl_ABcde2b8a16b4a},
    {"ABc2a8b16a4b", dnnl_ABc2a8b16a4b},
    {"ABc2a8b16a2b", dnnl_ABc2a8b16a2b},
    {"ABc2b32a8b", dnnl_ABc2b32a8b},
    {"ABcd2a8b16a4b", dnnl_ABcd2a8b16a4b},
    {"ABcd2a8b16a2b", dnnl_ABcd2a8b16a2b},
    {"aCBd2c8b16c2b", dnnl_aCBd2c8b16c2b},
    {"ABcd2b32a8b", dnnl_ABcd2b32a8b},
    {"aBCd2c8b16c2b", dnnl_aBCd2c8b16c2b},
    {"ABcde2a8b16a4b", dnnl_ABcde2a8b16a4b},
    {"ABcde2a8b16a2b", dnnl_ABcde2a8b16a2b},
    {"aCBde2c8b16c2b", dnnl_aCBde2c8b16c2b},
    {"ABcde2b32a8b", dnnl_ABcde2b32a8b},
    {"aBC2b8c16b2c", dnnl_aBC2b8c16b2c},
    {"aBCd2b8c16b2c", dnnl_aBCd2b8c16b2c},
    {"aBCde2b8c16b2c", dnnl_aBCde2b8c16b2c},
    {"aBCdef2b8c16b2c", dnnl_aBCdef2b8c16b2c},
    {"BAcde2b8a16b4a", dnnl_BAcde2b8a16b4a},
    {"BAcd2b8a16b4a", dnnl_BAcd2b8a16b4a},
    {"BAc2b8a16b4a", dnnl_BAc2b8a16b4a},
    {"BAcde2b8a16b2a", dnnl_BAcde2b8a16b2a},
    {"BAcd2b8a16b2a", dnnl_BAcd2b8a16b2a},
    {"BAc2b8a16b2a", dnnl_BAc2b8a16b2a},
    {"aBCde2c8b16c2b", dnnl_aBCde2c8b16c2b},
    {"aBCdef2c8b16c2b", dnnl_aBCdef2c8b16c2b},
    {"aCBdef2c8b16c2b", dnnl_aCBdef2c8b16c2b},
    {"aBCd2b8c16b4c", dnnl_aBCd2b8c16b4c},
    {"aBCde2b8c16b4c", dnnl_aBCde2b8c16b4c},
    {"BA4b8a16b2a", dnnl_BA4b8a16b2a},
    {"BA4b8a16b4a", dnnl_BA4b8a16b4a},
    {"aCB4c8b16c2b", dnnl_aCB4c8b16c2b},
    {"aCB4c8b16c4b", dnnl_aCB4c8b16c4b},
    {"BA16a16b", dnnl_BA16a16b},
    {"BA16a32b", dnnl_BA16a32b},
    {"BA16a48b", dnnl_BA16a48b},
    {"BA16a64b", dnnl_BA16a64b},
    {"aCB16c2b", dnnl_aCB16c2b},
    {"aCB16c4b", dnnl_aCB16c4b},
    {"BA16b2a", dnnl_BA16b2a},
    {"BA16b4a", dnnl_BA16b4a},
    {"aBC16b16c", dnnl_aBC16b16c},
    {"aBC16b32c", dnnl_aBC16b32c},
    {"AB16a16b", dnnl_AB16a16b},
    {"AB16a32b", dnnl_AB16a32b},
    {"adbc", dnnl_adbc},
    {"ABcde16a16b2a", dnnl_ABcde16a16b2a},
    {"aBCdef16b16c2b", dnnl_aBCdef16b16c2b},
};

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
    static const struct { const char *name; dnnl_alg_kind_t alg; } algs[] = {
        {"mean", dnnl_reduction_mean}, {"sum", dnnl_reduction_sum}, {"max", dnnl_reduction_max},
        {"min", dnnl_reduction_min}, {"mul", dnnl_reduction_mul}, {"norm_lp_max", dnnl_reduction_norm_lp_max},
        {"norm_lp_sum", dnnl_reduction_norm_lp_sum}, {"norm_lp_power_p_max", dnnl_reduction_norm_lp_power_p_max},
        {"norm_lp_power_p_sum", dnnl_reduction_norm_lp_power_p_sum}};
    dnnl_alg_kind_t alg = dnnl_alg_kind_undef;
    for (size_t k = 0; k < sizeof algs / sizeof algs[0]; k++)
        if (!strcmp(alg_s, algs[k].name)) alg = algs[k].alg;
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
