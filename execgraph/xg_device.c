/*
 * xg_device.c — the built-in device catalog and the validation of devices
 * (xg_device.h).
 *
 * Figures are NVIDIA's datasheet peaks (dense, i.e. without the 2:4
 * sparsity factor; boost clock):
 *   V100 SXM2   "NVIDIA Tesla V100 GPU Accelerator" datasheet (2020):
 *               FP64 7.8 TFLOPS, FP32 15.7 TFLOPS, Tensor 125 TFLOPS,
 *               HBM2 900 GB/s. No TF32 or BF16: tf32 carries the FP32 peak.
 *   A100 SXM4   "NVIDIA A100 Tensor Core GPU" datasheet (2021): FP64 9.7,
 *               FP32 19.5, TF32 Tensor Core 156, BF16/FP16 Tensor Core 312
 *               TFLOPS; HBM2 1,555 GB/s (40 GB), HBM2e 2,039 GB/s (80 GB).
 *   H100 SXM5   "NVIDIA H100 Tensor Core GPU" datasheet (2023): FP64 34,
 *               FP32 67 TFLOPS, TF32 Tensor Core 989 and BF16/FP16 1,979
 *               TFLOPS with sparsity (494.7 and 989.4 dense); HBM3 3.35 TB/s.
 *   H200 SXM    "NVIDIA H200 Tensor Core GPU" datasheet (2024): the H100
 *               SXM's compute peaks (FP64 34, FP32 67, TF32 989 and BF16/FP16
 *               1,979 TFLOPS with sparsity), 141 GB HBM3e at 4.8 TB/s.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "execgraph/xg_device.h"

#define T 1e12
#define GB 1e9

static const xg_device builtin[] = {
    {"V100-SXM2", {7.8 * T, 15.7 * T, 15.7 * T, 125 * T}, 900 * GB},
    {"A100-SXM4-40GB", {9.7 * T, 19.5 * T, 156 * T, 312 * T}, 1555 * GB},
    {"A100-SXM4-80GB", {9.7 * T, 19.5 * T, 156 * T, 312 * T}, 2039 * GB},
    {"H100-SXM5", {34 * T, 67 * T, 494.7 * T, 989.4 * T}, 3350 * GB},
    {"H200-SXM-141GB", {34 * T, 67 * T, 494.7 * T, 989.4 * T}, 4800 * GB},
};

static const struct {
    const char *alias, *name;
} aliases[] = {{"V100", "V100-SXM2"}, {"A100", "A100-SXM4-80GB"}, {"H100", "H100-SXM5"},
               {"H200", "H200-SXM-141GB"}};

static const char *const prec_names[XG_NPREC] = {"fp64", "fp32", "tf32", "fp16"};

const char *xg_prec_name(int prec)
{
    return prec >= 0 && prec < XG_NPREC ? prec_names[prec] : "";
}

int xg_prec_parse(const char *s)
{
    for (int i = 0; i < XG_NPREC; i++)
        if (!strcasecmp(s, prec_names[i]))
            return i;
    return !strcasecmp(s, "bf16") ? XG_FP16 : -1;
}

const xg_device *xg_device_builtins(int *n)
{
    *n = (int)(sizeof builtin / sizeof *builtin);
    return builtin;
}

const xg_device *xg_device_builtin(const char *name)
{
    for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
        if (!strcasecmp(name, aliases[i].alias))
            name = aliases[i].name;
    for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++)
        if (!strcasecmp(name, builtin[i].name))
            return &builtin[i];
    return NULL;
}

int xg_device_validate(const xg_device *d, xg_error *err)
{
    size_t n = 0;
    for (; n < sizeof d->name && d->name[n]; n++)
        if (!isprint((unsigned char)d->name[n])) {
            xg_error_set(err, -1, "name", "name: printable characters only");
            return -1;
        }
    if (n == 0 || n >= sizeof d->name) {
        xg_error_set(err, -1, "name", "name: 1 to %zu characters", sizeof d->name - 1);
        return -1;
    }
    for (int p = 0; p < XG_NPREC; p++)
        if (!isfinite(d->peak[p]) || d->peak[p] <= 0) {
            char field[32];
            snprintf(field, sizeof field, "peak_flops.%s", prec_names[p]);
            xg_error_set(err, -1, field, "%s: expected FLOP/s, a finite number > 0", field);
            return -1;
        }
    if (!isfinite(d->dram_bw) || d->dram_bw <= 0) {
        xg_error_set(err, -1, "dram_bandwidth",
                     "dram_bandwidth: expected bytes/s, a finite number > 0");
        return -1;
    }
    return 0;
}

int xg_devid_same(const xg_devid *a, const xg_devid *b)
{
    if (a->name[0] && b->name[0] && strcmp(a->name, b->name) != 0)
        return 0;
    if (a->cc_major >= 0 && b->cc_major >= 0 &&
        (a->cc_major != b->cc_major || a->cc_minor != b->cc_minor))
        return 0;
    if (a->memory > 0 && b->memory > 0 &&
        fabs(a->memory - b->memory) > 0.01 * fmax(a->memory, b->memory))
        return 0;
    return 1;
}

void xg_devid_describe(const xg_devid *d, char *buf, size_t size)
{
    if (!d->name[0] && d->cc_major < 0 && d->memory < 0) {
        snprintf(buf, size, "an unknown device");
        return;
    }
    char cc[48] = "", mem[48] = "";
    if (d->cc_major >= 0)
        snprintf(cc, sizeof cc, "compute capability %d.%d", d->cc_major,
                 d->cc_minor >= 0 ? d->cc_minor : 0);
    if (d->memory >= 0)
        snprintf(mem, sizeof mem, "%.1f GiB", d->memory / 1073741824.0);
    snprintf(buf, size, "%s (%s%s%s)", d->name[0] ? d->name : "unnamed device", cc,
             cc[0] && mem[0] ? ", " : "", mem);
}

const xg_device *xg_device_for(const xg_devid *id)
{
    if (!id->name[0])
        return NULL;
    for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
        if (strcasestr(id->name, aliases[i].alias)) {
            if (!strcmp(aliases[i].alias, "A100") && id->memory > 0 && id->memory < 50e9)
                return xg_device_builtin("A100-SXM4-40GB");
            return xg_device_builtin(aliases[i].name);
        }
    return NULL;
}
