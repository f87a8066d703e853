/*
 * xg_device.h — the GPU devices the efficiency and roofline figures are
 * measured against (paper 003 §3.1 "Efficiency"): peak FLOP/s per precision
 * and DRAM bandwidth. A small built-in catalog (V100, A100, H100, H200 from the
 * vendor's datasheets) and devices given by the user as JSON-like values,
 * validated here. Pure: no I/O, no mutable state.
 *
 * Precisions: fp64 and fp32 are the CUDA cores' (vector) peaks, tf32 and
 * fp16 (fp16 and bf16) the tensor cores' dense peaks (without sparsity).
 * A device without tensor-core tf32 (V100) carries its fp32 peak there.
 */
#ifndef PERFCAST_XG_DEVICE_H
#define PERFCAST_XG_DEVICE_H

#include "execgraph/xg_trace.h"

enum { XG_FP64 = 0, XG_FP32, XG_TF32, XG_FP16, XG_NPREC };

#define XG_DEVICE_NAME 64

typedef struct xg_device {
    char name[XG_DEVICE_NAME];
    double peak[XG_NPREC];  /* FLOP/s */
    double dram_bw;         /* bytes/s */
} xg_device;

/* "fp64", "fp32", "tf32", "fp16" (bf16 counts as fp16). */
const char *xg_prec_name(int prec);
/* -1 when s names no precision ("bf16" gives XG_FP16). */
int xg_prec_parse(const char *s);

/* The built-in devices, in catalog order; *n their number. */
const xg_device *xg_device_builtins(int *n);
/* A built-in device by name or alias ("A100" is the SXM4 80 GB, "V100"
 * the SXM2, "H100" the SXM5, "H200" the SXM), case-insensitive; NULL when none. */
const xg_device *xg_device_builtin(const char *name);

/* Whether the devices two traces ran on are of one type: 1 when either is
 * unknown or they agree in every property both give (name, compute
 * capability, memory within 1%); 0 when they differ. */
int xg_devid_same(const xg_devid *a, const xg_devid *b);
/* The built-in device a trace's device is a kind of ("NVIDIA H200" is the
 * H200, "NVIDIA A100-SXM4-40GB" the A100 with 40 GB, "Tesla V100-PCIE" the
 * V100: its peaks, or the SXM part's, which are at least as high); NULL
 * when none is. */
const xg_device *xg_device_for(const xg_devid *id);
/* "NVIDIA H200 (compute capability 9.0, 139.8 GiB)", or "an unknown device". */
void xg_devid_describe(const xg_devid *d, char *buf, size_t size);

/* Checks a device: a name of 1..63 printable bytes, every peak and the
 * bandwidth finite and > 0. 0, or -1 with err->field naming the field
 * ("name", "peak_flops.fp16", "dram_bandwidth"). */
int xg_device_validate(const xg_device *d, xg_error *err);

#endif
