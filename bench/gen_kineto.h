/*
 * gen_kineto.h — synthetic PyTorch profiler (Kineto) traces of one rank, in
 * the shapes and the order of the real traces in tests/data/kineto/: a
 * distributedInfo header, then every CPU event of the main thread in time
 * order (ProfilerStep#N annotations and cpu_ops with "Input Dims"/"Input
 * type" args), then the GPU activity: each kernel, memcpy or memset followed
 * by the cudaLaunchKernel/cudaMemcpyAsync/cudaMemsetAsync call that launched
 * it (matched by args.correlation), with the GPU running behind the CPU so
 * that kernels launched near the end of a step run after it ends.
 *
 * Per step: `launches` computation kernels of comp_us each (times a uniform
 * jitter when asked), `memcpys` host-to-device copies of memcpy_bytes
 * bytes, one memset and one NCCL all-reduce of comm_us launched last; every
 * step launches the same kernels in the same order. So a step's device
 * time per category, and each kernel's, is known exactly:
 *   comp = launches * comp_us (no jitter), comm = comm_us,
 *   mem  = memcpys * memcpy_us + memset_us.
 *
 * Used by bench/bench_ingest.c (large traces) and the end-to-end test
 * (tests/test_api_kineto.c). Header-only, no state outside a gk_gen; output
 * goes through a write callback, so a trace of any size is produced in
 * constant memory.
 */
#ifndef PERFCAST_BENCH_GEN_KINETO_H
#define PERFCAST_BENCH_GEN_KINETO_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int (*gk_write_fn)(void *ctx, const char *p, size_t n);

typedef struct gk_params {
    int rank, world_size;
    int steps;            /* ProfilerSteps */
    int first_step;       /* N of the first ProfilerStep#N */
    int launches;         /* computation kernels per step */
    double comp_us;       /* each */
    double comm_us;       /* the step's all-reduce */
    int memcpys;          /* per step */
    double memcpy_us;     /* each */
    double memcpy_bytes;  /* each */
    double memset_us;
    double jitter;        /* 0: exact durations; 0.2: comp kernels vary +-20% */
    uint64_t seed;
    int pretty;           /* 1: ", " and ": " between members as Python writes them */
} gk_params;

typedef struct gk_gen {
    gk_params p;
    gk_write_fn write;
    void *ctx;
    uint64_t rng;
    char buf[4096];
    long long bytes;
    long long events;
} gk_gen;

static const char *const gk_kernels[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)",
    "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float, float, "
    "float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, "
    "float*, float const*, float*, float*, float const*, float const*, float)",
    "ampere_sgemm_32x32_sliced1x4_tn",
    "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_"
    "stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel__5x_cudnn",
    "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, "
    "(cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)",
    "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float "
    "const*, long, long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)",
    "void split_embedding_codegen_forward_unweighted_kernel<c10::Half, c10::Half, float, false, "
    "long, 2ul, 32ul>(at::GenericPackedTensorAccessor<c10::Half, 1ul, at::RestrictPtrTraits, long>)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
    "at::native::MeanOps<float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, "
    "at::native::MeanOps<float, float>, unsigned int, float, 4>)",
};

static const char *const gk_ops[] = {"aten::add_", "aten::cudnn_batch_norm", "aten::mm",
                                     "aten::cudnn_convolution", "aten::copy_", "aten::max_pool2d",
                                     "aten::embedding_bag", "aten::mean"};

static const char *const gk_dims[] = {"[[2048], []]", "[[64, 256, 56, 56], [256], [256]]",
                                      "[[512, 1024], [1024, 4096]]", "[[32, 3, 224, 224]]",
                                      "[[128, 64, 112, 112], [64], [64], [64], [64]]",
                                      "[[16333467], [300, 2048]]", "[[], []]",
                                      "[[4096, 1000], [1000]]"};

static inline uint64_t gk_next(gk_gen *g)
{
    uint64_t x = g->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return g->rng = x;
}

/* uniform in [-1, 1) */
static inline double gk_unit(gk_gen *g)
{
    return (double)(gk_next(g) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static inline int gk_emit(gk_gen *g, int n)
{
    if (n < 0 || (size_t)n >= sizeof g->buf)
        return -1;
    g->bytes += n;
    return g->write(g->ctx, g->buf, (size_t)n);
}

static inline void gk_init(gk_gen *g, const gk_params *p, gk_write_fn write, void *ctx)
{
    memset(g, 0, sizeof *g);
    g->p = *p;
    g->write = write;
    g->ctx = ctx;
}

/* Microseconds from the trace's first step to step s, and a step's length:
 * room for every launch 4 us apart plus slack. */
static inline double gk_t0(void)
{
    return 1682725898079292.0;
}

static inline double gk_period(const gk_params *p)
{
    return 200.0 + (p->launches + p->memcpys + 2) * 4.0 + 500.0;
}

/* Kind of launch i of a step: 0 comp kernel, 1 memcpy, 2 memset, 3 nccl. */
static inline int gk_kind(const gk_params *p, int i)
{
    if (i < p->launches)
        return 0;
    if (i < p->launches + p->memcpys)
        return 1;
    return i == p->launches + p->memcpys ? 2 : 3;
}

static inline double gk_launch_ts(const gk_params *p, int s, int i)
{
    return gk_t0() + s * gk_period(p) + 100.0 + i * 4.0;
}

static inline long long gk_corr(const gk_params *p, int s, int i)
{
    return 1000000LL + (long long)s * (p->launches + p->memcpys + 2) * 3 + (long long)i * 3;
}

/* The CPU section of step s: its ProfilerStep and one cpu_op per launch. */
static inline int gk_cpu_step(gk_gen *g, int s, int *first)
{
    const gk_params *p = &g->p;
    const char *cs = p->pretty ? ", " : ",", *co = p->pretty ? ": " : ":";
    double start = gk_t0() + s * gk_period(p);
    int n = snprintf(g->buf, sizeof g->buf,
                     "%s{\"ph\"%s\"X\"%s\"cat\"%s\"user_annotation\"%s\"name\"%s\"ProfilerStep#%d\"%s"
                     "\"pid\"%s4037%s\"tid\"%s4037%s\"ts\"%s%.3f%s\"dur\"%s%.3f%s\"args\"%s{"
                     "\"External id\"%s%d%s\"Ev Idx\"%s%d}}",
                     *first ? "" : cs, co, cs, co, cs, co, p->first_step + s, cs, co, cs, co, cs,
                     co, start, cs, co, gk_period(p) - 50.0, cs, co, co, 70000 + s, cs, co,
                     43000 + s);
    *first = 0;
    if (gk_emit(g, n) < 0)
        return -1;
    g->events++;
    int total = p->launches + p->memcpys + 2;
    for (int i = 0; i < total; i++) {
        int k = gk_kind(p, i);
        const char *op = k == 1 ? "aten::copy_" : k == 2 ? "aten::zero_" : k == 3
                             ? "nccl:all_reduce"
                             : gk_ops[(unsigned)(i * 7) % (sizeof gk_ops / sizeof *gk_ops)];
        n = snprintf(g->buf, sizeof g->buf,
                     "%s{\"ph\"%s\"X\"%s\"cat\"%s\"%s\"%s\"name\"%s\"%s\"%s\"pid\"%s4037%s\"tid\"%s"
                     "4037%s\"ts\"%s%.3f%s\"dur\"%s%.3f%s\"args\"%s{\"External id\"%s%lld%s"
                     "\"Ev Idx\"%s%lld%s\"Input Dims\"%s%s%s\"Input type\"%s[\"float\"%s"
                     "\"Scalar\"]}}",
                     cs, co, cs, co, k == 3 ? "user_annotation" : "cpu_op", cs, co, op, cs, co, cs,
                     co, cs, co, gk_launch_ts(p, s, i) - 1.0, cs, co, 3.0 + 0.5 * gk_unit(g),
                     cs, co, co, gk_corr(p, s, i) + 1, cs, co, gk_corr(p, s, i) + 2, cs, co,
                     gk_dims[gk_next(g) % (sizeof gk_dims / sizeof *gk_dims)], cs, co, cs);
        if (gk_emit(g, n) < 0)
            return -1;
        g->events++;
    }
    return 0;
}

/* The GPU section of step s: each device event, then its launch. gpu_end
 * carries the stream's busy time from step to step. */
static inline int gk_gpu_step(gk_gen *g, int s, double *gpu_end)
{
    const gk_params *p = &g->p;
    const char *cs = p->pretty ? ", " : ",", *co = p->pretty ? ": " : ":";
    int total = p->launches + p->memcpys + 2;
    for (int i = 0; i < total; i++) {
        int k = gk_kind(p, i);
        double launch = gk_launch_ts(p, s, i);
        double dur = k == 0 ? p->comp_us * (1.0 + p->jitter * gk_unit(g))
                     : k == 1 ? p->memcpy_us
                     : k == 2 ? p->memset_us
                              : p->comm_us;
        double start = launch + 5.0 > *gpu_end ? launch + 5.0 : *gpu_end;
        *gpu_end = start + dur;
        long long corr = gk_corr(p, s, i);
        int n;
        if (k == 0 || k == 3) {
            const char *name = k == 3 ? "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, "
                                        "unsigned long, ncclWork*)"
                                      : gk_kernels[(unsigned)(i * 5) %
                                                   (sizeof gk_kernels / sizeof *gk_kernels)];
            n = snprintf(g->buf, sizeof g->buf,
                         "%s{\"ph\"%s\"X\"%s\"cat\"%s\"kernel\"%s\"name\"%s\"%s\"%s\"pid\"%s0%s"
                         "\"tid\"%s7%s\"ts\"%s%.3f%s\"dur\"%s%.3f%s\"args\"%s{\"External id\"%s"
                         "%lld%s\"queued\"%s0%s\"device\"%s0%s\"context\"%s1%s\"stream\"%s7%s"
                         "\"correlation\"%s%lld%s\"registers per thread\"%s40%s\"shared memory\"%s"
                         "%d%s\"blocks per SM\"%s%.6f%s\"warps per SM\"%s%.5f%s"
                         "\"grid\"%s[%d%s1%s1]%s\"block\"%s[%d%s1%s1]%s"
                         "\"est. achieved occupancy %%\"%s%d}}",
                         cs, co, cs, co, cs, co, name, cs, co, cs, co, cs, co, start, cs, co, dur,
                         cs, co, co, corr + 1, cs, co, cs, co, cs, co, cs, co, cs, co, corr, cs,
                         co, cs, co, (int)(gk_next(g) % 49152), cs, co, 2 + 40 * (gk_unit(g) + 1),
                         cs, co, 10 + 90 * (gk_unit(g) + 1), cs, co, 1 + (int)(gk_next(g) % 4096),
                         cs, cs, cs, co, 32 << (gk_next(g) % 5), cs, cs, cs, co,
                         (int)(gk_next(g) % 101));
        } else {
            n = snprintf(g->buf, sizeof g->buf,
                         "%s{\"ph\"%s\"X\"%s\"cat\"%s\"%s\"%s\"name\"%s\"%s\"%s\"pid\"%s0%s"
                         "\"tid\"%s7%s\"ts\"%s%.3f%s\"dur\"%s%.3f%s\"args\"%s{\"External id\"%s"
                         "%lld%s\"device\"%s0%s\"context\"%s1%s\"stream\"%s7%s\"correlation\"%s"
                         "%lld%s\"bytes\"%s%.0f%s\"memory bandwidth (GB/s)\"%s%.15g}}",
                         cs, co, cs, co, k == 1 ? "gpu_memcpy" : "gpu_memset", cs, co,
                         k == 1 ? "Memcpy HtoD (Pinned -> Device)" : "Memset (Device)", cs, co,
                         cs, co, cs, co, start, cs, co, dur, cs, co, co, corr + 1, cs, co, cs, co,
                         cs, co, cs, co, corr, cs, co, k == 1 ? p->memcpy_bytes : 4096.0, cs, co,
                         10 + 5 * gk_unit(g));
        }
        if (gk_emit(g, n) < 0)
            return -1;
        const char *api = k == 1 ? "cudaMemcpyAsync" : k == 2 ? "cudaMemsetAsync" : "cudaLaunchKernel";
        n = snprintf(g->buf, sizeof g->buf,
                     "%s{\"ph\"%s\"X\"%s\"cat\"%s\"cuda_runtime\"%s\"name\"%s\"%s\"%s\"pid\"%s4037%s"
                     "\"tid\"%s4037%s\"ts\"%s%.3f%s\"dur\"%s%.3f%s\"args\"%s{\"External id\"%s%lld%s"
                     "\"cbid\"%s211%s\"correlation\"%s%lld}}",
                     cs, co, cs, co, cs, co, api, cs, co, cs, co, cs, co, launch, cs, co,
                     2.5 + gk_unit(g), cs, co, co, corr + 1, cs, co, cs, co, corr);
        if (gk_emit(g, n) < 0)
            return -1;
        g->events += 2;
    }
    return 0;
}

/* The whole trace. 0, or -1 when the sink failed. */
static inline int gk_trace(gk_gen *g)
{
    const gk_params *p = &g->p;
    const char *cs = p->pretty ? ", " : ",", *co = p->pretty ? ": " : ":";
    g->rng = p->seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
    if (!g->rng)
        g->rng = 1;
    int n = snprintf(g->buf, sizeof g->buf,
                     "{\"schemaVersion\"%s1%s\"distributedInfo\"%s{\"backend\"%s\"nccl\"%s"
                     "\"rank\"%s%d%s\"world_size\"%s%d}%s\"traceEvents\"%s[",
                     co, cs, co, co, cs, co, p->rank, cs, co, p->world_size, cs, co);
    if (gk_emit(g, n) < 0)
        return -1;
    int first = 1;
    for (int s = 0; s < p->steps; s++)
        if (gk_cpu_step(g, s, &first) < 0)
            return -1;
    double gpu_end = 0;
    for (int s = 0; s < p->steps; s++)
        if (gk_gpu_step(g, s, &gpu_end) < 0)
            return -1;
    n = snprintf(g->buf, sizeof g->buf, "]%s\"traceName\"%s\"gen_kineto\"}\n", cs, co);
    return gk_emit(g, n);
}

#endif
